// Quorum approvals (`minApprovals` above 1): each approving vote is one conditional write on the
// approval item, never a transaction on it; only the vote that completes the quorum moves the run.
//
// Why the run moves exactly once, on AWS as on DynamoDB Local:
// 1. A vote is a single-item UpdateItem (`castVote`): `approvals + 1`, the voter appended to
//    `approvedBy`, conditional on PENDING, on the voter not being in `approvedBy`, and on
//    `approvals < minApprovals`. DynamoDB applies the writes of one item one at a time and checks
//    each condition against the item as the previous write left it, so the counter takes each value
//    1..minApprovals exactly once, by distinct reviewers, and never goes past minApprovals. Exactly
//    one vote reads back (ALL_NEW) `approvals = minApprovals`: the deciding vote.
// 2. Only a reached quorum moves the run (`completeQuorum`): one transaction that sets the approval
//    APPROVED on the condition PENDING AND `approvals >= minApprovals`, with its audit record and the
//    run's side (`decisionTransition`, itself conditional on the run waiting for this approval). The
//    deciding vote writes it; should its function die first, a later decision attempt or the expiry
//    sweep writes the same transaction from `lastApproval` (the deciding vote, stored by its write).
//    Whoever writes it, the PENDING condition lets one land: the run moves once.
// 3. A rejection, and a deadline, end the approval only while the quorum is open (`QUORUM_OPEN`), in
//    one transaction conditional on PENDING: once the quorum is reached no rejection lands, and
//    after a rejection no vote counts (the approval is no longer PENDING).
// 4. AWS refuses a plain write to an item that a transaction is writing (TransactionConflict): the
//    only transactions on the approval are the one that ends it (2, 3) and a reminder's or
//    escalation's (`nudges.ts`: it changes no vote, and is itself conditional on the vote count it
//    read, so it too tries again after a vote), and a vote refused that way
//    is tried again (`retryConflicts`) and then meets the ended approval's condition. Nothing was
//    written by a refused write, so no retry counts twice.
import { decisionAudit } from '../db/audited.ts';
import type { AuditChannel } from '../db/entities/audit.ts';
import { Approval, type AuditRecord, auditPut, getApproval, handledUpdate } from '../db/entities/approval.ts';
import { addApprovingVote, QUORUM_REACHED } from '../db/entities/approval-votes.ts';
import { writeAll } from '../db/transact.ts';
import { approvalEventSeq, eventsPut, newEvent } from '../db/entities/run-events.ts';
import { keptChanging, Refused, refused, retryConflicts } from '../db/conflicts.ts';
import { decisionMessage, decisionTransition, writeDecision } from '../engine/decisions.ts';
import { notifyEvents } from '../engine/notify.ts';
import { conflict, isConditionFailure } from '../errors.ts';

/** The deciding vote has this long to move the run itself before others may do it in its place. */
export const QUORUM_GRACE_MS = 30_000;

export const isQuorum = (a: Pick<Approval, 'minApprovals'>) => (a.minApprovals ?? 1) > 1;
export const quorumReached = (a: Pick<Approval, 'minApprovals' | 'approvals'>) =>
  isQuorum(a) && (a.approvals ?? 0) >= (a.minApprovals ?? 1);
/** 409 when this reviewer has already approved (one decision per reviewer). */
export function assertNotVoted(a: Pick<Approval, 'approvalId' | 'approvedBy'>, userId: string) {
  if (a.approvedBy?.includes(userId)) throw conflict('REVIEWER_ALREADY_DECIDED', `You have already decided approval ${a.approvalId}.`);
}

/** `via`: the account audit log's channel of the vote. */
export type Vote = { audit: AuditRecord; formData?: Record<string, unknown>; via?: AuditChannel };

/**
 * One approving vote: one conditional UpdateItem on the approval (see the top of this file). The
 * approval as the vote left it, or undefined when its condition refused it (ended, voted, reached).
 */
export async function castVote(a: Approval, userId: string, vote: Vote): Promise<Approval | undefined> {
  try {
    const Attributes = await retryConflicts(() => addApprovingVote(a, userId, JSON.stringify(vote)));
    return Approval.parse(Attributes);
  } catch (e) {
    if (isConditionFailure(e)) return undefined;
    throw e;
  }
}

/** A vote that did not complete the quorum: its audit record and its `approval.decided` event. */
export async function recordVote(a: Approval, vote: Vote) {
  const { audit } = vote;
  const event = newEvent(
    a.executionId,
    'approval.decided',
    {
      approvalId: a.approvalId,
      stepId: a.stepId,
      decision: 'approve',
      comment: audit.comment ?? null,
      decidedBy: audit.userId ?? null,
      formData: vote.formData ?? {},
      approvals: a.approvals ?? 0,
      minApprovals: a.minApprovals ?? 1,
    },
    audit.at,
  );
  // Numbered in the room the run keeps after its approval.requested (no write to the run: see VOTE_ROOM).
  event.seq = approvalEventSeq(a);
  // After the vote's own write (which is not a transaction: see the top of this file), as its approval's record is.
  await writeAll([auditPut(audit), eventsPut(a.accountId, [event]), decisionAudit(audit, vote.via)]);
  await notifyEvents(a, [event]);
}

/**
 * A reached quorum moves the run: the approval APPROVED with the deciding vote (its comment, its
 * form values), its audit record and the run's side, in one transaction conditional on PENDING (so
 * one lands, whoever writes it). The approval afterwards, or undefined when it ended otherwise
 * (cancelled with its run).
 */
export async function completeQuorum(a: Approval, now = Date.now()): Promise<Approval | undefined> {
  const last = a.lastApproval;
  if (!last) return undefined;
  const decidedBy = last.audit.userId ?? 'unknown';
  const formData = last.formData ?? {};
  const run = decisionTransition(a, { decision: 'approve', comment: last.audit.comment, decidedBy, formData }, { now });
  const decided = { status: 'APPROVED' as const, decision: 'approve' as const, comment: last.audit.comment, decidedBy, decidedAt: now };
  const own = [
    { Update: handledUpdate(a.accountId, a.approvalId, { ...decided, formData: JSON.stringify(formData) }, now, QUORUM_REACHED) },
    auditPut(last.audit),
    decisionAudit(last.audit, last.via),
  ];
  return retryConflicts(
    async (): Promise<Approval | undefined> => {
      const written = await writeDecision(own, run);
      if (written === 'moved') await decisionMessage(a, run);
      if (written !== 'refused') return { ...a, ...decided, formData };
      // Applied by someone else, ended otherwise, or (AWS) a transaction in flight on it: look again.
      const seen = await getApproval(a.accountId, a.approvalId);
      if (seen?.status !== 'PENDING') return seen?.status === 'APPROVED' ? seen : undefined;
      throw new Refused();
    },
    {
      attempts: 10,
      retryOn: refused,
      exhausted: keptChanging('approval'),
    },
  );
}

/** A quorum reached whose deciding vote did not move the run within the grace period (its function died): move it now. */
export async function completeStalledQuorum(a: Approval, now = Date.now()) {
  if (a.status === 'PENDING' && quorumReached(a) && (a.lastApproval?.audit.at ?? now) + QUORUM_GRACE_MS <= now)
    await completeQuorum(a, now);
}
