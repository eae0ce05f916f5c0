import type { Approval } from '../db/entities/approval.ts';
import { getUser, type User } from '../db/entities/user.ts';
import { badRequest, forbidden } from '../errors.ts';
import { assertOpen, decide, requireApproval } from './approvals.ts';
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
  const grant = await verifyReviewToken(token, approvalId, now);
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
  const review = await openReview(token, approvalId);
  const decision = review.grant.decisions.find((d) => d === form.decision);
  if (!decision)
    throw badRequest(
      'INVALID_DECISION',
      `This link can ${review.grant.decisions.join(' or ')}; the form sent ${form.decision ?? 'no decision'}.`,
    );
  const decided = await decide({
    principal: { accountId: review.grant.accountId, userId: review.reviewer.userId },
    approvalId: review.approval.approvalId,
    decision,
    comment: form.comment,
    formData: decision === 'approve' ? formValuesOf(review.approval, form.formData) : undefined,
    channel: review.grant.channel,
    sourceIp: client.sourceIp,
    userAgent: client.userAgent,
  });
  return { review, decided, decision };
}

/**
 * A submitted form's strings as the step's fields expect them: `true`/`false` for booleans, numbers for
 * numbers (anything else is left as sent, for `decide` to refuse with the field's path). Nothing sent: none.
 */
function formValuesOf(a: Approval, sent: Record<string, string> = {}): Record<string, unknown> | undefined {
  if (Object.keys(sent).length === 0) return undefined;
  const types = new Map((a.form ?? []).map((f) => [f.name, f.type]));
  return Object.fromEntries(
    Object.entries(sent).map(([name, v]) => {
      const type = types.get(name);
      if (type === 'boolean' && (v === 'true' || v === 'false')) return [name, v === 'true'];
      if (type === 'number' && v.trim() !== '' && Number.isFinite(Number(v))) return [name, Number(v)];
      return [name, v];
    }),
  );
}
