import { writeAll } from '../db/transact.ts';
import { decisionAudit } from '../db/audited.ts';
import { type Approval, auditPut, newAuditId } from '../db/entities/approval.ts';
import { getUser, type User } from '../db/entities/user.ts';
import { AppError, badRequest, forbidden } from '../errors.ts';
import { httpStatus } from '../http-status.ts';
import { logger } from '../logger.ts';
import { assertOpen, decide, formValuesOf, requireApproval } from './approvals.ts';
import { assertNotVoted } from './quorum.ts';
import { type Decision, type ReviewGrant, verifyReviewToken } from './review-links.ts';

/**
 * The confirmation page of a reviewer's link (review-links.ts): what it shows and what its POST
 * decides. Everything is checked on every use, the GET too, so the page never offers a decision the
 * POST would refuse: the token (signature, approval, expiry), then the reviewer as they are now (still
 * a member of the account, not disabled, still a reviewer of the approval), then the approval (still
 * open, not yet decided by this reviewer). Any session the browser may have plays no part: the link
 * decides as the reviewer it was made for, whoever opens it.
 */
export type Review = { grant: ReviewGrant; approval: Approval; reviewer: User };

export async function openReview(token: string | undefined, approvalId: string, now = Date.now()): Promise<Review> {
  return reviewOf(await verifyReviewToken(token, approvalId, now), now);
}

async function reviewOf(grant: ReviewGrant, now: number): Promise<Review> {
  const [approval, reviewer] = await Promise.all([
    requireApproval(grant.accountId, grant.approvalId),
    // A consistent read: a removal or disable takes effect for links at once, not after a cache's time.
    getUser(grant.accountId, grant.userId, true),
  ]);
  if (!reviewer)
    throw forbidden('REVIEWER_REMOVED', 'The reviewer this link was sent to is no longer a member of the account; it cannot decide.');
  if (reviewer.disabled) throw forbidden('REVIEWER_DISABLED', `The reviewer this link was sent to (${reviewer.email}) is disabled.`);
  if (!approval.reviewers.includes(`user:${reviewer.userId}`) && !approval.reviewers.includes(`role:${reviewer.role}`))
    throw forbidden('NOT_A_REVIEWER', `${reviewer.email} is no longer a reviewer of this approval.`);
  assertOpen(approval, now);
  assertNotVoted(approval, reviewer.userId);
  return { grant, approval, reviewer };
}

/** The page's POST: one decision the link allows, as its reviewer, through the one `decide` (quorum, exactly once, 409s, audit). */
export async function decideByReview(
  token: string | undefined,
  approvalId: string,
  form: { decision: string | undefined; comment?: string; formData?: Record<string, string> },
  client: { sourceIp: string; userAgent?: string },
): Promise<{ review: Review; decided: Approval; decision: Decision }> {
  const now = Date.now();
  const grant = await verifyReviewToken(token, approvalId, now);
  let review: Review;
  let decision: Decision | undefined;
  try {
    review = await reviewOf(grant, now);
    decision = grant.decisions.find((d) => d === form.decision);
    if (!decision)
      throw badRequest(
        'INVALID_DECISION',
        `This link can ${grant.decisions.join(' or ')}; the form sent ${form.decision ?? 'no decision'}.`,
      );
  } catch (e) {
    // A refusal of a genuine link (its token checked out) is audited like any refused decision (`decide` audits its own).
    if (e instanceof AppError && e.kind !== 'not_found') await auditRefusal(grant, e, form, client, now);
    throw e;
  }
  const decided = await decide({
    principal: { accountId: review.grant.accountId, userId: review.reviewer.userId },
    approvalId: review.approval.approvalId,
    decision,
    comment: form.comment,
    formData: decision === 'approve' ? formValuesOf(review.approval, form.formData) : undefined,
    // The page showed the step's form (review-page.tsx): its required fields must be filled in.
    formShown: decision === 'approve',
    channel: review.grant.channel,
    auditChannel: 'link',
    sourceIp: client.sourceIp,
    userAgent: client.userAgent,
  });
  return { review, decided, decision };
}

async function auditRefusal(
  grant: ReviewGrant,
  e: AppError,
  form: { decision: string | undefined; comment?: string },
  client: { sourceIp: string; userAgent?: string },
  now: number,
) {
  const decision: Decision | undefined = form.decision === 'approve' || form.decision === 'reject' ? form.decision : undefined;
  const record = {
    auditId: newAuditId(now),
    approvalId: grant.approvalId,
    accountId: grant.accountId,
    at: now,
    outcome: 'refused' as const,
    status: httpStatus(e),
    code: e.code,
    ...(decision ? { decision } : {}),
    comment: form.comment,
    userId: grant.userId,
    channel: grant.channel,
    sourceIp: client.sourceIp,
    userAgent: client.userAgent?.slice(0, 512),
  };
  await writeAll([auditPut(record), decisionAudit(record, 'link')]).catch((err: unknown) =>
    logger.warn('refused decision not audited', { approvalId: grant.approvalId, error: err as Error }),
  );
}
