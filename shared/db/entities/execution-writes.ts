import { retentionTtl, runRetentionDays } from '../retention.ts';
import { buildUpdate, type Condition } from '../update.ts';
import { type Execution, executionKey, executionListings, storedExecution } from './execution.ts';
import { ACTIVE_INDEX_ATTRIBUTES, activeIndex } from './execution-index.ts';
import { IN_PROGRESS } from './execution-state.ts';
import { nextSeq } from './run-events.ts';

// The run item as written, and the conditions and fields of the writes that move a run.

export const executionItem = (e: Execution) => ({
  ...executionKey(e.accountId, e.executionId),
  ...executionListings(e),
  ...(IN_PROGRESS.includes(e.status) ? activeIndex(e, e.updatedAt) : {}),
  type: 'execution',
  ...storedExecution(e),
});

/** DynamoDB's item limit is 400 KB; keys, indexes and attribute names need some of it. */
export const MAX_EXECUTION_ITEM_BYTES = 380_000;
/** The stored size of an execution item (an upper bound of DynamoDB's own count). */
export const executionItemBytes = (e: Execution) => Buffer.byteLength(JSON.stringify(executionItem(e)));

/** The condition of a write that must see the run exactly as it was read (every write changes `updatedAt`). */
export const unchangedSince = (e: Pick<Execution, 'status' | 'updatedAt'>): Condition => ({
  expression: '#status = :seen AND updatedAt = :updated',
  names: { '#status': 'status' },
  values: { ':seen': e.status, ':updated': e.updatedAt },
});

/** The condition of every write a worker makes while it holds the run: its lease, live, and no cancel asked for. */
export const heldBy = (owner: string, now: number): Condition => ({
  expression: '#status = :running AND #lease.#owner = :owner AND #lease.expiresAt > :now AND attribute_not_exists(cancelRequested)',
  names: { '#status': 'status', '#lease': 'lease', '#owner': 'owner' },
  values: { ':running': 'RUNNING', ':owner': owner, ':now': now },
});

/**
 * What every write that finishes a run sets (the retention clock starts: by the run's outcome when
 * `ended` gives it, `runRetentionDays`; else the longest) and removes (it leaves the active index).
 */
export const finishing = (now: number, ended?: { status: string; trigger?: string }) => ({
  set: { finishedAt: now, updatedAt: now, ttl: retentionTtl(now, ended ? runRetentionDays(ended) : undefined) },
  remove: ['dispatch', 'lease', 'wakeAt', 'approvalId', 'decision', 'callbackId', 'report', ...ACTIVE_INDEX_ATTRIBUTES],
});

const unfinished = (s: { status: string }) => s.status === 'PENDING' || s.status === 'RUNNING' || s.status === 'WAITING';

/** The fields of a run that ends CANCELLED (with one event, `nextSeq(e)`): its unfinished steps are cancelled with it. */
export const cancelledFields = (e: Execution, reason: string | undefined, now: number) => ({
  status: 'CANCELLED' as const,
  seq: nextSeq(e),
  cancelReason: reason,
  error: { code: 'CANCELLED', message: reason ? `Cancelled: ${reason}` : 'Cancelled.' },
  steps: e.steps.map((s) =>
    unfinished(s)
      ? {
          ...s,
          status: 'CANCELLED' as const,
          ...(s.steps ? { steps: s.steps.map((n) => (unfinished(n) ? { ...n, status: 'CANCELLED' as const } : n)) } : {}),
        }
      : s,
  ),
  ...finishing(now).set,
});

/** `execution.cancelled`'s data for a run whose cancel was asked for (`cancelRequested`): its reason, and who asked. */
export const cancelledData = (e: Pick<Execution, 'cancelReason' | 'cancelBy' | 'cancelKey'>, from: string) => ({
  reason: e.cancelReason ?? null,
  from,
  ...(e.cancelBy ? { by: e.cancelBy } : e.cancelKey ? { key: e.cancelKey } : {}),
});

/** The update that ends a run CANCELLED, conditional on the state read. */
export const cancelledUpdate = (e: Execution, reason: string | undefined, now: number) =>
  buildUpdate(executionKey(e.accountId, e.executionId), cancelledFields(e, reason, now), finishing(now).remove, unchangedSince(e));
