import { IN_PROGRESS, type RecordedReport } from '../db/entities/execution-state.ts';
import { newEvent, nextSeq, type RunEvent, sequenced } from '../db/entities/run-events.ts';
import { checkpointUpdate } from '../db/entities/execution-held.ts';
import { finishing } from '../db/entities/execution-writes.ts';
import { countRunChange } from '../db/entities/run-hours.ts';
import type { Execution } from '../db/entities/execution.ts';
import { retryConflicts } from '../db/conflicts.ts';
import { type TransactItem, writeAll } from '../db/transact.ts';
import { isConditionFailure } from '../errors.ts';
import { emit } from '../metrics.ts';
import { reportedOutcome } from './callbacks.ts';
import type { WorkflowDefinition } from './definition.ts';
import { type Lane, newDispatch, sendRunMessage, MAX_DELAY_SECONDS } from './dispatch.ts';
import { stopAfterLostWrite } from './lost-write.ts';
import { notifyEvents } from './notify.ts';
import type { StepIO } from './steps/types.ts';
import { CHECKPOINT_LIMITS, eventItems, FIT_ANY_SIZE, jsonBytes, MERGED_BYTES, MERGED_EVENTS, NotInline, runItems } from './run-items.ts';

/**
 * A run held by this worker invocation, with the progress not written yet. Steps without an external
 * effect (`set`, `fail`, a skipped step, the run's end) only change it in memory; `flush` writes
 * everything since the last write in one transaction: the run's changed fields, one event item per
 * step, and the steps' side records (artifact metadata, approval). So a run of `set` steps costs one
 * write, and a crash repeats no external effect unknowingly: before an `http_request` or `artifact`
 * the worker flushes, so the record shows the step it is in.
 *
 * When it writes, and what one write holds: `./run-items.ts`.
 */
export class HeldRun {
  private changed = new Set<string>();
  private dropped = new Set<string>();
  private groups: RunEvent[][] = [];
  private items: object[] = [];
  /** The last event item, while steps inside a loop may add to it (`record` with `merge`), and its size. */
  private open: RunEvent[] | undefined;
  private openBytes = 0;
  /** The size of the first `measured` event items and `measuredItems` side records not written yet (`full` measures). */
  private pendingBytes = 0;
  private measured = 0;
  private measuredItems = 0;

  /** The items of a run that ended before it was ever written (`unwritten`), for its start to write. */
  private ended: Record<string, unknown>[] | undefined;

  constructor(
    public e: Execution,
    readonly definition: WorkflowDefinition | undefined,
    readonly owner: string,
    private readonly unwrittenRun = false,
    /** An unwritten run's dispatch id: the start's message, which a hand-off (`handOff`) waits for. */
    private readonly startDispatch?: string,
  ) {}

  /**
   * A run nobody has written yet, executed by its trigger (`./inline.ts`) on the worker's step loop:
   * `endedItems` are what its start writes, ended or handed off (`handOff`). Anything else that needs a
   * write (a wait, a checkpoint, a fresh invocation) throws `NotInline`: the start queues the run as usual.
   */
  static unwritten(e: Execution, definition: WorkflowDefinition, dispatch: string) {
    return new HeldRun(e, definition, '', true, dispatch);
  }

  /** Executed by its trigger: handed to the worker at its first step that is not inline (a test run, unwritten too, runs them all). */
  get handsOff() {
    return this.unwrittenRun && this.startDispatch !== undefined;
  }

  get endedItems() {
    return this.ended;
  }

  /** Whether `endedItems` hand the run, in progress, to the start's message (`handOff`) rather than end it. */
  get handedOff() {
    return this.ended !== undefined && IN_PROGRESS.includes(this.e.status);
  }

  /**
   * At its first step that is not `inline` (never run here): its start writes the run there, RUNNING
   * and handed to the start's message as `release` leaves a run, with its events. False: the loop stops.
   */
  handOff(): false {
    if (!this.handsOff || this.items.length > 0) throw new NotInline('only an unwritten run with no side records is handed off');
    const e = { ...this.e, status: 'RUNNING' as const, dispatch: this.startDispatch, updatedAt: Date.now() };
    for (const k of this.dropped) delete (e as Record<string, unknown>)[k];
    this.e = e;
    this.ended = runItems(e, this.groups);
    return false;
  }

  /** What its steps do outside the run; absent: the worker's (`STEP_IO`). A test run's answers from its mocks (`./test-run.ts`). */
  io?: StepIO;

  /** The lane of the message that brought the run to this worker: its next message (`release`) goes to the same one. */
  lane?: Lane;

  /** Queue the notifications its events mean (a test run sends none). */
  notify(events: readonly RunEvent[]): Promise<void> {
    return notifyEvents(this.e, events);
  }

  /** Wait out a retry's short backoff in this invocation (a test run plans it in memory, sleeping none). */
  pause(ms: number): Promise<void> {
    return new Promise((r) => setTimeout(r, ms));
  }

  /** What a callback's recorded report gives its step (the callback item's output or error; a test run's mock). */
  reported(r: RecordedReport) {
    return reportedOutcome(this.e, r);
  }

  get dirty() {
    return this.changed.size > 0 || this.dropped.size > 0 || this.groups.length > 0 || this.items.length > 0;
  }

  /**
   * Progress to write before a step with an external effect: anything but the step count alone
   * (`executed`), which a crash during the effect takes back with the step it counted.
   */
  get progressed() {
    return (
      this.dirty &&
      !(this.changed.size === 1 && this.changed.has('executed') && this.dropped.size === 0 && !this.groups.length && !this.items.length)
    );
  }

  /** Remove a field from the run, in memory now and with the next write. */
  drop(field: keyof Execution) {
    delete this.e[field];
    this.changed.delete(field);
    this.dropped.add(field);
  }

  /** Change the run in memory; `flush` writes it. */
  update(fields: Partial<Execution>) {
    this.e = { ...this.e, ...fields };
    // The last change of a field wins: one write may not both set and remove it.
    for (const k of Object.keys(fields)) {
      this.changed.add(k);
      this.dropped.delete(k);
    }
  }

  /**
   * The progress not written yet is as much as one write should hold: the step loop writes a
   * checkpoint. Fewer than `FIT_ANY_SIZE` items fit a transaction whatever their size (each item is at
   * most 400 KB), so a short run measures nothing; past that, what is new is measured once.
   */
  get full() {
    const count = 1 + this.items.length + this.groups.length;
    if (count >= CHECKPOINT_LIMITS.items) return true;
    if (count < FIT_ANY_SIZE) return false;
    for (; this.measured < this.groups.length; this.measured++) this.pendingBytes += jsonBytes(this.groups[this.measured]);
    for (; this.measuredItems < this.items.length; this.measuredItems++) this.pendingBytes += jsonBytes(this.items[this.measuredItems]);
    return this.pendingBytes >= CHECKPOINT_LIMITS.bytes;
  }

  /** Events that join the last event item (the open one is always the last) count at once if it was measured. */
  private lastGrew(bytes: number) {
    if (this.measured === this.groups.length) this.pendingBytes += bytes;
  }

  /** Number `events` on from the run's last seq (the write that holds them sets the run's). */
  private sequence(events: RunEvent[]): RunEvent[] {
    if (events.length === 0) return events;
    const s = sequenced(nextSeq(this.e), events);
    this.update({ seq: s.seq });
    return s.events;
  }

  /**
   * One step's events (a group, numbered), and its side records. `merge`: a step inside a loop, whose
   * events join the last loop step's group (up to `MERGED_EVENTS` and `MERGED_BYTES`), so `full` counts a
   * 100-item loop of `set` steps as a few items, not hundreds. A write packs its groups into as few
   * event items as fit (`eventItems`).
   */
  record(events: RunEvent[], items: object[] = [], merge = false) {
    if (events.length) {
      const numbered = this.sequence(events);
      // Only a loop's events are measured as they come (the shared item's size); the rest when `full` asks.
      const bytes = merge ? jsonBytes(numbered) : 0;
      if (merge && this.open && this.open.length + numbered.length <= MERGED_EVENTS && this.openBytes + bytes <= MERGED_BYTES) {
        this.open.push(...numbered);
        this.openBytes += bytes;
        this.lastGrew(bytes);
      } else {
        this.groups.push(numbered);
        this.open = merge ? numbered : undefined;
        this.openBytes = bytes;
      }
    }
    this.items.push(...items);
  }

  /** Add events to the last step's item (the run's end goes with its last step). */
  append(events: RunEvent[]) {
    const last = this.groups.at(-1);
    if (!last) return this.record(events);
    const numbered = this.sequence(events);
    last.push(...numbered);
    if (last !== this.open && this.measured < this.groups.length) return;
    const bytes = jsonBytes(numbered);
    if (last === this.open) this.openBytes += bytes;
    this.lastGrew(bytes);
  }

  /**
   * Write the progress in one transaction (a checkpoint), conditional on this worker's live lease and
   * no cancel asked for; `remove` drops fields. False when the run was cancelled or taken away (then handled).
   */
  async flush(only: readonly string[] = []): Promise<boolean> {
    const now = Date.now();
    const remove = [...new Set([...only, ...this.dropped])];
    if (this.unwrittenRun) return this.settle(remove, now);
    const set: Record<string, unknown> = { updatedAt: now };
    for (const k of this.changed) set[k] = (this.e as Record<string, unknown>)[k];
    const events = this.groups.flat();
    const transaction = [
      checkpointUpdate(this.e, set, remove, this.owner, now),
      ...(this.items as TransactItem[]),
      // The events written with the run's end expire with it (its retention by outcome).
      ...eventItems(this.e.accountId, this.groups, typeof set.ttl === 'number' ? set.ttl : undefined),
    ];
    try {
      // A cancel request written while this transaction is in flight makes DynamoDB refuse it: again,
      // and then the condition sees the request.
      await retryConflicts(() => writeAll(transaction));
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      await stopAfterLostWrite(this.e.accountId, this.e.executionId, this.owner);
      return false;
    }
    for (const k of remove) delete (this.e as Record<string, unknown>)[k];
    this.e = { ...this.e, updatedAt: now };
    this.changed.clear();
    this.dropped.clear();
    this.groups = [];
    this.items = [];
    this.open = undefined;
    this.openBytes = 0;
    this.pendingBytes = 0;
    this.measured = 0;
    this.measuredItems = 0;
    await this.notify(events);
    return true;
  }

  /**
   * An unwritten run's "write": only its end, kept as the items its start writes (false: nothing was
   * written, so no caller counts an end). Its events go in as few items as fit (`MERGED_EVENTS`).
   */
  private settle(remove: readonly string[], now: number): false {
    if (IN_PROGRESS.includes(this.e.status) || this.items.length > 0) throw new NotInline('the run must be written before its end');
    const e: Record<string, unknown> = { ...this.e, updatedAt: now };
    for (const k of remove) delete e[k];
    const ttl = typeof e.ttl === 'number' ? e.ttl : undefined;
    this.ended = runItems(e as Execution, this.groups, ttl);
    return false;
  }

  /** Leave the run (no lease): it waits in the active index for a message or a person. */
  async letGo(fields: Partial<Execution>): Promise<boolean> {
    this.update(fields);
    return this.flush(['lease']);
  }

  /** End the run (SUCCEEDED, FAILED): it leaves the active index, and its retention starts. */
  async end(fields: Partial<Execution>): Promise<boolean> {
    const now = Date.now();
    const before = this.e;
    const { set, remove } = finishing(now, { ...this.e, ...fields });
    this.update({ ...fields, ...(set as Partial<Execution>) });
    if (IN_PROGRESS.includes(this.e.status)) throw new Error('end() needs a final status');
    const written = await this.flush(remove);
    // Counted once its conditional write succeeded (an unwritten run's start counts its end).
    if (written) countRunChange(before, this.e, now);
    return written;
  }

  /** End the run FAILED with `error`: the events of the step that failed it (if any), then `execution.failed`. */
  async fail(error: { code: string; message: string }, stepEvents: RunEvent[] = []): Promise<void> {
    const failed = newEvent(this.e.executionId, 'execution.failed', { error }, Date.now());
    if (stepEvents.length) this.record([...stepEvents, failed]);
    else this.append([failed]);
    if (await this.end({ status: 'FAILED', error })) emit('ExecutionFailed');
  }

  /**
   * Hand the run to a new queue message: at once when this invocation runs out of time, or after a
   * delay step's wait (`until`; SQS delays are at most 15 minutes, so a longer wait takes several hops).
   */
  async release(until?: number): Promise<void> {
    const dispatch = newDispatch();
    if (!(await this.letGo({ dispatch }))) return;
    const delaySeconds = until === undefined ? 0 : Math.min(MAX_DELAY_SECONDS, (until - Date.now()) / 1000);
    await sendRunMessage({ accountId: this.e.accountId, executionId: this.e.executionId, dispatch, lane: this.lane }, delaySeconds);
  }
}
