import type * as z from 'zod';
import {
  type Callback,
  DEADLINE_PARTITIONS,
  deadlineUnchanged,
  getCallback,
  listDueCallbacks,
  recordHeartbeat,
} from '../db/entities/callback.ts';
import { sweepPass } from '../db/sweep-shards.ts';
import { keptChanging, Refused, refused, retryConflicts } from '../db/conflicts.ts';
import { type CallbackResult, settleCallback } from '../engine/callbacks.ts';
import { conflict, isConditionFailure } from '../errors.ts';
import { logger } from '../logger.ts';
import type { ReportBody } from '../schemas/callbacks.ts';

// Callbacks from external systems (docs/workflows.md "Callbacks"): the report and
// the heartbeat (v1 routes; their credential, the callback's token, is checked by `callback-auth`) and
// the scheduled sweep's deadlines.

export const callbackView = (c: Callback) => ({
  callbackId: c.callbackId,
  executionId: c.executionId,
  stepId: c.stepId,
  status: c.status,
  deadline: c.deadline,
  timeoutAt: c.timeoutAt,
  ...(c.reportedAt !== undefined ? { reportedAt: c.reportedAt } : {}),
});

const alreadyHandled = (c: Callback) =>
  conflict('CALLBACK_ALREADY_HANDLED', `Callback ${c.callbackId} was already ${c.status === 'PENDING' ? 'reported' : c.status}.`);

/**
 * Report on a callback, exactly once: one transaction moves the callback from PENDING and the run on
 * (conditional writes: of two reports at once one wins, the other is 409). A run that no longer waits
 * (interrupted) takes the report when it is resumed.
 */
export async function reportCallback(c: Callback, body: z.infer<typeof ReportBody>, now = Date.now()) {
  const result: CallbackResult =
    body.status === 'success' ? { status: 'SUCCEEDED', output: body.output ?? {} } : { status: 'FAILED', error: body.error };
  let seen: Callback | undefined = c;
  return retryConflicts(
    async () => {
      if (seen?.status !== 'PENDING') throw alreadyHandled(seen ?? c);
      if ((await settleCallback(seen, result, now)) !== 'refused') return callbackView({ ...seen, status: result.status, reportedAt: now });
      // Refused: decided meanwhile, or a transaction in flight on it (a heartbeat): look again.
      seen = await getCallback(c.accountId, c.callbackId);
      if (seen?.status !== 'PENDING') throw alreadyHandled(seen ?? c);
      throw new Refused();
    },
    {
      attempts: 4,
      retryOn: refused,
      exhausted: keptChanging('callback'),
    },
  );
}

/** A heartbeat: the wait's next heartbeat is due `heartbeatSeconds` from now (never past its timeout). */
export async function heartbeatCallback(c: Callback, now = Date.now()) {
  if (c.status !== 'PENDING') throw alreadyHandled(c);
  let deadline: number;
  try {
    deadline = await recordHeartbeat(c, now);
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    throw alreadyHandled((await getCallback(c.accountId, c.callbackId)) ?? c);
  }
  return callbackView({ ...c, deadline, lastHeartbeatAt: now });
}

/**
 * End one wait past its deadline (`CALLBACK_TIMED_OUT`; the step fails, or goes on with
 * `onTimeout: "continue"`). Conditional on PENDING and the deadline read: a report or a heartbeat
 * that came first wins. False when nothing was ended.
 */
export async function expireCallback(c: Callback, now = Date.now()): Promise<boolean> {
  const heartbeat = c.deadline < c.timeoutAt;
  const message = heartbeat
    ? `No heartbeat within ${c.heartbeatSeconds} s for step ${c.stepId}.`
    : `Step ${c.stepId} was not reported before its deadline.`;
  const written = await settleCallback(
    c,
    { status: 'TIMED_OUT', error: { code: 'CALLBACK_TIMED_OUT', message } },
    now,
    deadlineUnchanged(c.deadline),
  );
  if (written === 'refused') return false;
  return true;
}

/** The scheduled sweep's callback part: every pending callback past its deadline, shard by shard, at most 1,000 a pass. */
export async function expireDueCallbacks(now = Date.now(), until = Date.now() + 45_000): Promise<number> {
  let expired = 0;
  await sweepPass(DEADLINE_PARTITIONS, { total: 1000, page: 25, until }, async (partition, limit) => {
    const { items } = await listDueCallbacks(partition, now, limit);
    const results = await Promise.allSettled(items.map((c) => expireCallback(c, now)));
    let progress = 0;
    for (const r of results) {
      if (r.status === 'fulfilled' && r.value) progress++;
      if (r.status === 'rejected') logger.error('callback not expired', { error: r.reason as Error });
    }
    expired += progress;
    return { read: items.length, more: progress > 0 && items.length === limit };
  });
  return expired;
}
