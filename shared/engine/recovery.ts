// Restart and crash semantics (docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs"): the startup sweep and
// crash recovery (redelivered messages and the scheduled sweep's expired leases); manual resume is ./resume.ts.
import { countRunChange } from '../db/entities/run-hours.ts';
import { type TransactItem, writeAll } from '../db/transact.ts';
import { runChange } from '../db/entities/execution-transitions.ts';
import { currentStepId, type Execution, getExecutionToChange } from '../db/entities/execution.ts';
import { IN_PROGRESS } from '../db/entities/execution-state.ts';
import { ACTIVE_INDEX_ATTRIBUTES, ACTIVE_SHARDS, type ActiveKind, type ActiveRange, listActive } from '../db/entities/execution-index.ts';
import { cancelledData, cancelledUpdate } from '../db/entities/execution-writes.ts';
import { eventsPut, newEvent, nextSeq, type RunEvent } from '../db/entities/run-events.ts';
import { lostRace, retryConflicts } from '../db/conflicts.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { delayUntil, newDispatch, runsQueueBacklog, sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';
import { countAcceptedTrigger } from './runs.ts';

export type InterruptReason = NonNullable<Execution['interruptReason']>;

/** Write the run's update and its event in one transaction, then deliver the event. */
async function transition(e: Execution, update: TransactItem, event: RunEvent, after: Partial<Execution>, extra: object[] = []) {
  await writeAll([update, eventsPut(e.accountId, [event]), ...(extra as never[])]);
  await notifyEvents({ ...e, ...after }, [event]);
}

/** INTERRUPTED: no worker, no message may take the run again; the pending approval (if any) stays. */
async function interrupt(e: Execution, reason: InterruptReason, now: number) {
  const seq = nextSeq(e);
  const fields = { status: 'INTERRUPTED' as const, interruptedAt: now, interruptReason: reason, updatedAt: now, seq };
  const event = { ...newEvent(e.executionId, 'execution.interrupted', { reason, from: e.status, stepId: currentStepId(e) }, now), seq };
  await transition(e, runChange(e, fields, ['dispatch', 'lease', ...ACTIVE_INDEX_ATTRIBUTES]), event, fields);
  countRunChange(e, fields, now);
  emit('ExecutionInterrupted');
  logger.warn('execution interrupted', { executionId: e.executionId, reason, from: e.status });
}

/** A run whose cancel was asked for when its worker went away ends CANCELLED, as asked. */
async function cancelAsAsked(e: Execution, now: number) {
  const event = {
    ...newEvent(e.executionId, 'execution.cancelled', cancelledData(e, e.status), now),
    seq: nextSeq(e),
  };
  await transition(e, { Update: cancelledUpdate(e, e.cancelReason, now) }, event, { status: 'CANCELLED' });
  countRunChange(e, { status: 'CANCELLED' }, now);
}

/** `execution.resumed`, numbered next after the run as read. */
export const resumedEvent = (e: Execution, by: string, reason: string, now: number) => ({
  ...newEvent(e.executionId, 'execution.resumed', { by, reason, stepId: currentStepId(e) }, now),
  seq: nextSeq(e),
});

/** Back to work from the last checkpoint: a new dispatch and its message; the worker re-enters the step. */
export async function redispatch(e: Execution, by: string, reason: string, now: number, extraRemove: string[] = [], extra: object[] = []) {
  const dispatch = newDispatch();
  const event = resumedEvent(e, by, reason, now);
  const fields = {
    status: 'RUNNING' as const,
    dispatch,
    updatedAt: now,
    seq: event.seq,
  };
  await transition(
    e,
    runChange(e, fields, ['lease', ...extraRemove], { as: { ...e, dispatch, lease: undefined }, now }),
    event,
    fields,
    extra,
  );
  await sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch }, delayUntil(e.wakeAt, now));
}

/**
 * Run `act` on the run as the caller saw it, re-reading it (consistently: the index is not) when it
 * changed meanwhile, as long as `applies` still holds. Every write is conditional on the state read.
 */
export async function settle(seen: Execution, applies: (e: Execution) => boolean, act: (e: Execution) => Promise<void>): Promise<boolean> {
  return retryConflicts(
    async (attempt) => {
      const e = attempt === 1 ? seen : await getExecutionToChange(seen.accountId, seen.executionId);
      if (!e || !applies(e)) return false;
      await act(e);
      return true;
    },
    { attempts: 5, retryOn: lostRace, exhausted: () => false },
  );
}

/** Shards of the active index a sweep reads at once. */
const SHARDS_AT_ONCE = 8;

/**
 * Every page of one kind's active runs (all shards, `SHARDS_AT_ONCE` at a time), `onPage` called on
 * each: calls for pages of different shards overlap.
 */
export async function eachActive(kind: ActiveKind, range: ActiveRange, onPage: (items: Execution[]) => Promise<void>) {
  let next = 0;
  const reader = async () => {
    for (let shard = next++; shard < ACTIVE_SHARDS; shard = next++) {
      let startKey: Record<string, unknown> | undefined;
      do {
        const page = await listActive(kind, shard, range, 100, startKey);
        await onPage(page.items);
        startKey = page.lastKey;
      } while (startKey);
    }
  };
  await Promise.all(Array.from({ length: SHARDS_AT_ONCE }, reader));
}

export const count = (results: PromiseSettledResult<boolean>[], what: string) => {
  for (const r of results) if (r.status === 'rejected') logger.error(what, { error: r.reason as Error });
  return results.filter((r) => r.status === 'fulfilled' && r.value).length;
};

export type RestartRule = 'all' | 'orphaned';

/**
 * A PENDING run older than this whose message the runs queue cannot be holding has lost it (SQS
 * delays are at most 15 minutes; the runs queue's age alarm fires at 5).
 */
export const ORPHANED_PENDING_MS = 15 * 60_000;

/**
 * On AWS a release ends no invocation and loses no message: a run is orphaned only when nothing can
 * carry it on, a lease that expired (its worker died) or a PENDING run whose message is gone: over
 * `ORPHANED_PENDING_MS` old while the runs queues (both lanes) hold no message at all (`backlog`:
 * ready, in flight and delayed). A PENDING run is never judged by its age alone: in a deep queue (a burst, a
 * slow tenant, a throttled worker) a healthy run waits longer than that, and only the queue's
 * emptiness says its message is not there (SQS cannot be asked for one message, nor peeked at).
 * A live lease, a message on its way (PENDING, or RUNNING without a lease: sleeping, handed off) and
 * a run waiting for its approval carry on.
 */
export const isOrphaned = (e: Execution, now: number, backlog: number) =>
  (e.status === 'RUNNING' && e.lease !== undefined && e.lease.expiresAt <= now) ||
  (e.status === 'PENDING' && now - e.updatedAt > ORPHANED_PENDING_MS && backlog === 0);

/** A PENDING run the "orphaned" rule looks at the runs queue for (it is old enough to have lost its message). */
const overduePending = (e: Execution, now: number) => e.status === 'PENDING' && now - e.updatedAt > ORPHANED_PENDING_MS;

export type RestartResult = {
  interrupted: number;
  redispatched: number;
  /** Overdue PENDING runs left waiting because the runs queue was not empty (`isOrphaned`). */
  spared: number;
  /** The runs queue's messages when the sweep looked (only when an overdue PENDING run made it look). */
  backlog?: number;
};

/**
 * The startup sweep (after every deployment; at every `npm start`): webhook runs in progress become
 * INTERRUPTED (reason `restart`) and are never replayed: with `rule: "all"` every one (local mode,
 * where a start is a real process restart, or a stack that wants a release to be a hard cut), with
 * `"orphaned"` only those nothing can carry on (`isOrphaned`, AWS's default: it reads the runs
 * queue's counts once, when an overdue PENDING run makes it ask). Idempotent: interrupted runs leave
 * the index, so a second sweep finds nothing. `redispatch` (local mode, whose queue does not survive a
 * restart) re-sends the message every other waiting run needs; the dispatch id makes duplicates harmless.
 */
export async function sweepRestart(opts: { now?: number; redispatch?: boolean; rule?: RestartRule } = {}): Promise<RestartResult> {
  const now = opts.now ?? Date.now();
  const orphanedOnly = opts.rule === 'orphaned';
  let backlog: Promise<number> | undefined;
  let seenBacklog: number | undefined;
  const queueBacklog = async () => {
    backlog ??= runsQueueBacklog();
    seenBacklog = await backlog;
    return seenBacklog;
  };
  const inProgress = (e: Execution) => e.trigger === 'webhook' && IN_PROGRESS.includes(e.status);
  let interrupted = 0;
  let spared = 0;
  await eachActive('webhook', { part: 'all' }, async (items) => {
    const queued = orphanedOnly && items.some((e) => inProgress(e) && overduePending(e, now)) ? await queueBacklog() : 0;
    const swept = (e: Execution) => inProgress(e) && (!orphanedOnly || isOrphaned(e, now, queued));
    spared += items.filter((e) => orphanedOnly && inProgress(e) && overduePending(e, now) && !swept(e)).length;
    const results = await Promise.allSettled(
      items.map((seen) =>
        settle(seen, swept, async (e) => {
          await (e.cancelRequested ? cancelAsAsked(e, now) : interrupt(e, 'restart', now));
          if (e.status === 'PENDING') countAcceptedTrigger(e);
        }),
      ),
    );
    interrupted += count(results, 'run not interrupted');
  });
  if (spared > 0)
    logger.warn('overdue PENDING runs left waiting: the runs queue is not empty, their messages may be in it', {
      spared,
      backlog: seenBacklog,
    });
  let redispatched = 0;
  if (opts.redispatch) {
    await eachActive('api', { part: 'all' }, async (items) => {
      const waiting = items.filter((e) => e.dispatch && !e.lease && (e.status === 'PENDING' || e.status === 'RUNNING'));
      await Promise.all(
        waiting.map((e) =>
          sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch: e.dispatch as string }, delayUntil(e.wakeAt, now)),
        ),
      );
      redispatched += waiting.length;
    });
  }
  return { interrupted, redispatched, spared, ...(seenBacklog !== undefined && { backlog: seenBacklog }) };
}

const crashed = (now: number) => (e: Execution) => e.status === 'RUNNING' && e.lease !== undefined && e.lease.expiresAt <= now;

/**
 * A run whose worker died (its lease expired): webhook runs and runs without `recovery` become
 * INTERRUPTED (reason `crash`); API runs of workflows with `recovery: true` resume from their last
 * checkpoint. A run whose cancel was asked for ends CANCELLED.
 */
function recover(now: number) {
  return (e: Execution) => {
    if (e.cancelRequested) return cancelAsAsked(e, now);
    if (e.trigger === 'webhook' || !e.recovery) return interrupt(e, 'crash', now);
    return redispatch(e, 'recovery', 'crash', now);
  };
}

/** The scheduled sweep's crash part: every run whose lease expired before `now`. */
export async function sweepCrashed(now = Date.now()): Promise<number> {
  let recovered = 0;
  for (const kind of ['webhook', 'api'] as const) {
    await eachActive(kind, { part: 'expired', before: now }, async (items) => {
      // Counted once settled: pages of several shards settle at once (`recovered += await …` would read it first).
      const results = await Promise.allSettled(items.map((seen) => settle(seen, crashed(now), recover(now))));
      recovered += count(results, 'crashed run not recovered');
    });
  }
  return recovered;
}

/** A redelivered message found its run held by an earlier attempt: recover it if that lease expired. */
export async function recoverIfCrashed(e: Execution, now = Date.now()): Promise<boolean> {
  return crashed(now)(e) && settle(e, crashed(now), recover(now));
}
