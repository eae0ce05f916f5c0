// Reminders and escalation of pending approvals (a manual_approval step's `remind` and `escalate`),
// done by the scheduled sweep from the due items of `shared/db/entities/approval-nudge.ts`.
//
// Why each fires at most once per interval, however many sweeps run at once: a sweep reads the
// approval (strongly consistent) and writes one transaction: the approval's new reminder count, next
// reminder time, escalation time and reviewers, conditional on PENDING and on the counts it read
// (reminders, escalation, votes); the due item moved to the next due time; the events. Of sweeps that
// read the same state one transaction lands, the others fail their condition, read again and find
// nothing due. A decision, an expiry or a cancel makes the approval not PENDING: nothing more fires.
import { type Approval, getApproval } from '../db/entities/approval.ts';
import {
  type DueNudge,
  deleteNudge,
  isCurrent,
  listDueNudgesIn,
  NUDGE_PARTITIONS,
  nudgeDelete,
  nudgedApprovalItem,
  nudgePut,
} from '../db/entities/approval-nudge.ts';
import { writeAll } from '../db/transact.ts';
import { sweepPass } from '../db/sweep-shards.ts';
import { config } from '../config.ts';
import { approvalEventSeq, eventsPut, newEvent, type RunEvent } from '../db/entities/run-events.ts';
import { Refused, refused, retryConflicts } from '../db/conflicts.ts';
import { notifyEvents } from '../engine/notify.ts';
import { isConditionFailure, isTransactionConflict } from '../errors.ts';
import { logger } from '../logger.ts';

export type NudgeOutcome = { reminded: boolean; escalated: boolean };
const NOTHING: NudgeOutcome = { reminded: false, escalated: false };

/** What is due on `a` at `now`: a reminder (while some are left, before the deadline) and/or the escalation. */
export function dueNow(a: Approval, now: number): NudgeOutcome {
  if (a.status !== 'PENDING' || (a.expiresAt !== undefined && a.expiresAt <= now)) return NOTHING;
  return {
    reminded: !!a.remind && a.nextRemindAt !== undefined && a.nextRemindAt <= now && (a.reminders ?? 0) < a.remind.max,
    escalated: !!a.escalate && a.escalatedAt === undefined && a.escalate.at <= now,
  };
}

/**
 * The sweep's part for one due item: the approval's due reminder and escalation, written once
 * (see the top of this file), then their events queued to the run's notification targets and the
 * approval's channels (the notify worker sends the messages). A due item whose approval was handled is deleted.
 */
export async function nudgeApproval(item: DueNudge, now = Date.now()): Promise<NudgeOutcome> {
  return retryConflicts(
    async (): Promise<NudgeOutcome> => {
      const a = await getApproval(item.accountId, item.approvalId);
      if (a?.status !== 'PENDING') {
        // Handled (or gone): nothing more is due; its due item goes.
        await deleteNudge(item);
        return NOTHING;
      }
      const due = dueNow(a, now);
      if (!due.reminded && !due.escalated) {
        // Done by another sweep since this item was read (its transaction moved the item), or a copy
        // left behind (the migration moved it while a sweep sent from the old one): it goes.
        if (!isCurrent(item, a)) await deleteNudge(item);
        return NOTHING;
      }
      const next: Approval = {
        ...a,
        ...(due.reminded && a.remind ? { reminders: (a.reminders ?? 0) + 1, nextRemindAt: now + a.remind.everySeconds * 1000 } : {}),
        ...(due.escalated && a.escalate ? { escalatedAt: now, reviewers: [...new Set([...a.reviewers, ...a.escalate.reviewers])] } : {}),
      };
      const events = nudgeEvents(a, next, due, now);
      try {
        await writeAll([nudgedApprovalItem(a, next), nudgeDelete(item), ...nudgePut(next), eventsPut(a.accountId, events)]);
      } catch (e) {
        if (!isConditionFailure(e) && !isTransactionConflict(e)) throw e;
        // Another sweep, a vote or the decision came first: look again.
        throw new Refused();
      }
      await notifyEvents(a, events);
      return due;
    },
    {
      attempts: 5,
      retryOn: refused,
      exhausted: () => {
        logger.warn('approval reminder not sent: the approval kept changing', { approvalId: item.approvalId });
        return NOTHING;
      },
    },
  );
}

/** `approval.escalated` then `approval.reminded`, numbered beside the approval's votes (`approvalEventSeq`). */
function nudgeEvents(a: Approval, next: Approval, due: NudgeOutcome, now: number): RunEvent[] {
  const events: RunEvent[] = [];
  const base = { approvalId: a.approvalId, stepId: a.stepId };
  if (due.escalated && a.escalate) {
    const added = a.escalate.reviewers.filter((r) => !a.reviewers.includes(r));
    const e = newEvent(a.executionId, 'approval.escalated', { ...base, added, reviewers: next.reviewers }, now);
    events.push({ ...e, seq: approvalEventSeq({ ...a, escalatedAt: now }) });
  }
  if (due.reminded && a.remind) {
    const e = newEvent(a.executionId, 'approval.reminded', { ...base, reminder: next.reminders, max: a.remind.max }, now);
    events.push({ ...e, seq: approvalEventSeq(next) });
  }
  return events;
}

/** Due items read a page at a time from each shard. */
const PAGE = 25;

/**
 * The scheduled sweep's part: every due reminder and escalation, shard by shard (a few at once), page
 * by page, at most SWEEP_REMINDERS_PER_PASS a pass and until `until` (the function's time left).
 */
export async function nudgeDueApprovals(
  now = Date.now(),
  until = Date.now() + 45_000,
): Promise<NudgeOutcome & { reminders: number; escalations: number }> {
  let reminders = 0;
  let escalations = 0;
  const pass = { total: config().SWEEP_REMINDERS_PER_PASS, page: PAGE, until };
  await sweepPass(NUDGE_PARTITIONS, pass, async (partition, limit) => {
    const items = await listDueNudgesIn(partition, now, limit);
    const results = await Promise.allSettled(items.map((i) => nudgeApproval(i, now)));
    for (const r of results) {
      if (r.status === 'rejected') logger.error('approval reminder failed', { error: r.reason as Error });
      else {
        if (r.value.reminded) reminders++;
        if (r.value.escalated) escalations++;
      }
    }
    // Items done leave the due time read, so the next query is the next page; a page with nothing
    // done (failures, approvals past their deadline that the expiry sweep takes) waits for the next sweep.
    const progress = results.some((r) => r.status === 'fulfilled' && (r.value.reminded || r.value.escalated));
    return { read: items.length, more: progress && items.length === limit };
  });
  return { reminded: reminders > 0, escalated: escalations > 0, reminders, escalations };
}
