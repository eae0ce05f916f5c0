import {
  type Approval,
  auditPut,
  EXPIRY_PARTITIONS,
  handledUpdate,
  leaveExpiryIndex,
  listExpired,
  getApproval,
  newAuditId,
  QUORUM_OPEN,
} from '../db/entities/approval.ts';
import { completeStalledQuorum } from './quorum.ts';
import { sweepPass } from '../db/sweep-shards.ts';
import { decisionMessage, decisionTransition, TIMEOUT_ACTOR, timeoutDecision, writeDecision } from '../engine/decisions.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';

/**
 * Expire one approval past its deadline: EXPIRED (conditional on PENDING, so a decision that came
 * first wins), audited, and the waiting run moved as the step says (`onTimeout`: fail the run, or
 * continue as approved / rejected). False when someone decided first.
 */
export async function expireApproval(a: Approval, now = Date.now()): Promise<boolean> {
  const { decision } = timeoutDecision(a.onTimeout);
  const run = decisionTransition(a, timeoutDecision(a.onTimeout), { now, expired: a.onTimeout });
  const own = [
    {
      Update: handledUpdate(
        a.accountId,
        a.approvalId,
        { status: 'EXPIRED', decidedBy: TIMEOUT_ACTOR, decidedAt: now, ...(a.onTimeout !== 'fail' ? { decision } : {}) },
        now,
        // A quorum reached before the deadline is not expired: its deciding vote moves the run.
        QUORUM_OPEN,
      ),
    },
    auditPut({
      auditId: newAuditId(now),
      approvalId: a.approvalId,
      accountId: a.accountId,
      at: now,
      outcome: 'decided',
      channel: 'timeout',
      ...(a.onTimeout !== 'fail' ? { decision } : {}),
    }),
  ];
  // A run that no longer waits for it (cancelled, interrupted) stays as it is; the expiry is recorded.
  const written = await writeDecision(own, run);
  if (written === 'refused') {
    // A quorum reached whose deciding vote did not move the run (its function died): move it now.
    const seen = await getApproval(a.accountId, a.approvalId);
    if (seen?.status === 'PENDING') {
      await completeStalledQuorum(seen, now);
      return false;
    }
    // Decided meanwhile (or by data from before decisions left the index): take it out of the index.
    await leaveExpiryIndex(a.accountId, a.approvalId);
    return false;
  }
  emit('ApprovalExpired');
  if (written === 'moved') await decisionMessage(a, run);
  return true;
}

/**
 * The scheduled sweep's approval part: every pending approval past its deadline, shard by shard (a
 * few at once), page by page, at most 1,000 a pass (the rest wait for the next pass).
 */
export async function expireDueApprovals(now = Date.now(), until = Date.now() + 45_000): Promise<number> {
  let expired = 0;
  await sweepPass(EXPIRY_PARTITIONS, { total: 1000, page: 25, until }, async (partition, limit) => {
    const { items } = await listExpired(partition, now, limit);
    const results = await Promise.allSettled(items.map((a) => expireApproval(a, now)));
    let progress = 0;
    for (const r of results) {
      if (r.status === 'fulfilled' && r.value) progress++;
      if (r.status === 'rejected') logger.error('approval not expired', { error: r.reason as Error });
    }
    expired += progress;
    // Expired and already-decided items leave the index, so the next query is the next page; a page
    // with no progress (only a run that kept changing) waits for the next sweep.
    return { read: items.length, more: progress > 0 && items.length === limit };
  });
  return expired;
}
