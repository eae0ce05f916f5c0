import type { TransactItem } from '../transact.ts';
import { buildUpdate } from '../update.ts';
import { type Execution, executionKey } from './execution.ts';
import { activeIndex, activeSortKey } from './execution-index.ts';
import { unchangedSince } from './execution-writes.ts';

// The writes that move a run outside its worker (the engine's decisions, reports, cancels, resumes,
// retries and recoveries): each a transaction item on the run, conditional on what the run was seen
// as. The active index's keys follow the state it is written in.

type Placed = Pick<Execution, 'executionId' | 'trigger' | 'lease' | 'dispatch' | 'wakeAt'>;

/**
 * The run as read (`e`; refused when it changed since) gets `set` and loses `remove`. With `index`, it
 * sits in the active index as that state does at `now`.
 */
export function runChange(
  e: Execution,
  set: Record<string, unknown>,
  remove: readonly string[],
  index?: { as: Placed; now: number },
): TransactItem {
  const placed = index ? activeIndex(index.as, index.now) : {};
  return { Update: buildUpdate(executionKey(e.accountId, e.executionId), { ...set, ...placed }, remove, unchangedSince(e)) };
}

/**
 * A wait ended (an approval's decision, a callback's report): the run, still waiting for it, is handed
 * to message `dispatch` with what ended the wait recorded (`decision` or `report`, as JSON). `resumed`:
 * the run was INTERRUPTED and rejoins the active index.
 */
export function waitEnded(
  run: { accountId: string; executionId: string },
  ended: { approvalId: string; decision: string } | { callbackId: string; report: string },
  t: { dispatch: string; now: number; seq: number; resumed?: Execution },
): TransactItem {
  const byApproval = 'approvalId' in ended;
  const [idName, id, waiting] = byApproval
    ? (['approvalId', ended.approvalId, 'WAITING_APPROVAL'] as const)
    : (['callbackId', ended.callbackId, 'WAITING_CALLBACK'] as const);
  const { dispatch, now, resumed } = t;
  const update = buildUpdate(
    executionKey(run.accountId, run.executionId),
    {
      status: 'RUNNING',
      dispatch,
      ...(byApproval ? { decision: ended.decision } : { report: ended.report }),
      updatedAt: now,
      seq: t.seq,
      // Handed to its message: due in the active index (`resumed`: it rejoins it).
      ...(resumed
        ? activeIndex({ ...resumed, dispatch, lease: undefined }, now)
        : { GSI2SK: activeSortKey({ executionId: run.executionId, dispatch }, now) }),
    },
    [idName, ...(resumed ? ['interruptedAt', 'interruptReason'] : [])],
    {
      expression: `#status = :seen AND ${idName} = :wait`,
      names: { '#status': 'status' },
      values: { ':seen': resumed ? 'INTERRUPTED' : waiting, ':wait': id },
    },
  );
  return { Update: update };
}

/** A cancel asked of a run a worker holds (its lease, by `owner`): the worker ends it at its next write. */
export const cancelRequest = (
  e: Pick<Execution, 'accountId' | 'executionId'>,
  owner: string | undefined,
  ask: { reason?: string | undefined; by?: string | undefined; key?: string | undefined; now: number },
): TransactItem => ({
  Update: buildUpdate(
    executionKey(e.accountId, e.executionId),
    { cancelRequested: true, cancelReason: ask.reason, cancelBy: ask.by, cancelKey: ask.key, updatedAt: ask.now },
    [],
    {
      expression: '#status = :running AND #lease.#owner = :owner',
      names: { '#status': 'status', '#lease': 'lease', '#owner': 'owner' },
      values: { ':running': 'RUNNING', ':owner': owner },
    },
  ),
});

/**
 * A retry whose message could not be sent: the run back as `restore` says, while it still waits,
 * unclaimed, for `dispatch` (a worker that claimed it got the message after all).
 */
export const retryUndone = (e: Execution, dispatch: string, restore: Record<string, unknown>, remove: readonly string[]): TransactItem => ({
  Update: buildUpdate(executionKey(e.accountId, e.executionId), restore, remove, {
    expression: '#status = :pending AND dispatch = :d',
    names: { '#status': 'status' },
    values: { ':pending': 'PENDING', ':d': dispatch },
  }),
});

/**
 * A start whose message could not be sent ends FAILED (`fields`: its status, error, seq and end),
 * only while the run still waits, as its start wrote it (PENDING, or RUNNING when handed off at a step
 * its start could not run), for that message's dispatch.
 */
export function abandonedStart(e: Execution, fields: Record<string, unknown>, remove: readonly string[]): TransactItem {
  return {
    Update: buildUpdate(executionKey(e.accountId, e.executionId), fields, remove, {
      expression: '#status = :written AND dispatch = :d',
      names: { '#status': 'status' },
      values: { ':written': e.status, ':d': e.dispatch },
    }),
  };
}
