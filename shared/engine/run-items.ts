import { executionItem } from '../db/entities/execution-writes.ts';
import type { Execution } from '../db/entities/execution.ts';
import { eventsPut, packEvents, type RunEvent } from '../db/entities/run-events.ts';

/**
 * What one write of a held run (`./session.ts`) may hold, and the items of a run its start writes.
 *
 * After an effect, its outcome waits for the run's next write like any other progress: before the
 * next effect, when the run waits, goes on in a fresh invocation or ends (`set` → `http_request` →
 * `switch` → `set` writes once in the worker, at its end, its `set` run by its trigger). A crash between the effect's answer and that write
 * (in-memory steps, microseconds) is a crash during the effect, which the run's recovery already
 * answers (docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs").
 *
 * Long runs (docs/performance.md "Long runs"): a transaction holds at most 100 items and 4 MB, so
 * once the progress not written yet is `full`, the step loop flushes before the next step, as it
 * does before a step with an external effect. Each such write is a whole checkpoint (the run's
 * position and `seq` with the events up to them, conditional on the lease), never events alone: a
 * crash between two of them leaves the run at the first, with exactly its events, and whoever takes
 * the run on (recovery, a v1 resume) goes on from there, numbering on from its `seq`. Events written
 * ahead of the run's update would outlive a crash or a lost lease as steps the run never recorded
 * (with the seqs its next events take again: they are keyed by a fresh ULID, not by seq, so writing
 * them again is no overwrite), and events written after it would leave a gap.
 */

/** Events of steps inside a loop that share one event item (about 200 bytes each: well within an item's 400 KB). */
export const MERGED_EVENTS = 200;
/** ...and at most this much JSON in one such item (events with long error messages), far below an item's 400 KB. */
export const MERGED_BYTES = 100_000;

/**
 * What one write of a run's progress holds at most before the step loop writes a checkpoint
 * (`full`). DynamoDB takes at most 100 items and 4 MB in one transaction; the run's update (up to
 * 400 KB) and what the step after the check adds (its event item, its side records, the run's end)
 * must still fit, hence the margins.
 */
export const CHECKPOINT_LIMITS = { items: 64, bytes: 2_000_000 };

/** Fewer items than this fit one transaction whatever their size: 7 × 400 KB and the run's update stay under 4 MB. */
export const FIT_ANY_SIZE = 8;

export const jsonBytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/** A run that has not been written yet would have to be (it waits, sleeps, or goes on in a fresh invocation): see `HeldRun.unwritten`. */
export class NotInline extends Error {
  override name = 'NotInline';
}

/**
 * One write's events in as few items as fit (`MERGED_EVENTS`, `MERGED_BYTES`), each keyed by its first
 * event: the steps a write holds share items, so `set` → `http_request` → `switch` → `set` ends with one
 * event item, not one a step (fewer items in the transaction, each billed at least a write unit, twice).
 */
export const eventItems = (accountId: string, groups: readonly RunEvent[][], ttl?: number) =>
  packEvents(groups, { events: MERGED_EVENTS, bytes: MERGED_BYTES }).map((g) => eventsPut(accountId, g, ttl));

/** A run not written yet as its start writes it (ended, or handed off): its item and its events in as few items as fit. */
export const runItems = (e: Execution, groups: RunEvent[][], ttl?: number): Record<string, unknown>[] => [
  executionItem(e),
  ...eventItems(e.accountId, groups, ttl).map((p) => p.Put.Item),
];
