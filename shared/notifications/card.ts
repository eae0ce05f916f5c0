import type { Approval } from '../db/entities/approval.ts';
import { reviewerLinks } from '../domain/review-links.ts';
import { APPROVAL_LINK_PATH, link } from '../links.ts';
import type { ApprovalCard, OpenChannel } from '../channels/types.ts';

/** What a card shows beyond the approval: the workflow's name and the decider's email, where known. */
export type CardContext = { workflowName?: string; decidedBy?: string };

/**
 * The confirmation page of a message to no reviewer in particular (a Slack channel, a Teams chat):
 * the one-click page, which asks for the reader's API key; messages to one reviewer carry their own
 * links instead (`reviewerLinks`).
 */
export const sharedReviewLink = (approvalId: string) => link(APPROVAL_LINK_PATH, { approvalId, decision: 'approve' });

/** Whether a card shows the approval as it is now (a retried update skips messages that already do). */
export const shows = (a: Pick<Approval, 'status' | 'approvals'>) => `${a.status}#${a.approvals ?? 0}`;

/** The card of `approval` for one message: to `reviewer` (their links) or to a conversation (the shared page). */
export async function approvalCard(
  approval: Approval,
  ctx: CardContext,
  channel: Pick<OpenChannel, 'type'>,
  reviewer?: { userId: string; email: string },
): Promise<ApprovalCard> {
  const links = reviewer
    ? await reviewerLinks({
        accountId: approval.accountId,
        approvalId: approval.approvalId,
        userId: reviewer.userId,
        channel: channel.type,
        ...(approval.expiresAt !== undefined ? { expiresAt: approval.expiresAt } : {}),
      })
    : { review: sharedReviewLink(approval.approvalId) };
  return {
    approvalId: approval.approvalId,
    title: approval.title,
    ...(approval.description ? { description: approval.description } : {}),
    workflowId: approval.workflowId,
    ...(ctx.workflowName ? { workflowName: ctx.workflowName } : {}),
    executionId: approval.executionId,
    stepId: approval.stepId,
    fields: (approval.form ?? []).map((f) => ({ name: f.name, ...(f.label ? { label: f.label } : {}), value: f.default })),
    minApprovals: approval.minApprovals ?? 1,
    approvals: approval.approvals ?? (approval.status === 'APPROVED' ? 1 : 0),
    status: approval.status,
    ...(approval.status !== 'PENDING' ? { decidedBy: ctx.decidedBy ?? approval.decidedBy, decidedAt: approval.decidedAt } : {}),
    ...(approval.expiresAt !== undefined ? { expiresAt: approval.expiresAt } : {}),
    links,
    ...(reviewer ? { recipient: reviewer.email } : {}),
  };
}
