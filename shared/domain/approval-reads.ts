import type { Approval, AuditRecord, ApprovalStatus } from '../db/entities/approval.ts';
import { listApprovalsByStatus, listAudit } from '../db/entities/approval.ts';
import { listApprovalMessages } from '../db/entities/approval-message.ts';
import { getExecution } from '../db/entities/execution.ts';
import { listUsers } from '../db/entities/user.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { assertReviewer, isReviewer, type KeyPrincipal, requireApproval } from './approvals.ts';
import { notifiedView } from './notified.ts';
import type { Principal } from './principal.ts';

// What the v1 API (and the console's approval pages) show of approvals: the record, the list a key owner
// or signed-in member may decide, the detail with its history. Decisions are in approvals.ts.

/** Who reads: an API key's owner (v1), or a signed-in member (the console; their role is known, no read). */
export type Reader = KeyPrincipal | Extract<Principal, { kind: 'session' }>;

export const approvalView = (a: Approval, history?: AuditRecord[]) => ({
  approvalId: a.approvalId,
  executionId: a.executionId,
  workflowId: a.workflowId,
  stepId: a.stepId,
  status: a.status,
  title: a.title,
  ...(a.description !== undefined ? { description: a.description } : {}),
  reviewers: a.reviewers,
  ...(a.form ? { form: a.form } : {}),
  ...(a.expiresAt !== undefined ? { expiresAt: a.expiresAt } : {}),
  ...(a.loop ? { loop: a.loop } : {}),
  createdAt: a.createdAt,
  minApprovals: a.minApprovals ?? 1,
  approvals: a.approvals ?? (a.status === 'APPROVED' ? 1 : 0),
  ...(a.decision ? { decision: a.decision, comment: a.comment ?? null, decidedBy: a.decidedBy, decidedAt: a.decidedAt } : {}),
  ...(history ? { history: history.map(({ accountId: _a, approvalId: _b, ...h }) => h) } : {}),
});

/**
 * v1 list: approvals in a status (PENDING by default) that the reader may decide, oldest first. `all`
 * (the console's admin view; the caller checks the role) keeps every approval of the account.
 */
export async function pageApprovals(
  p: Reader,
  status: ApprovalStatus,
  limit: number,
  cursor: string | undefined,
  opts: { all?: boolean } = {},
) {
  const binding = `approvals:${p.accountId}:${p.userId}:${status}${opts.all ? ':all' : ''}`;
  const page = await listApprovalsByStatus(p.accountId, status, limit, decodeCursor(cursor, binding));
  const mine = opts.all ? page.items.map(() => true) : await Promise.all(page.items.map((a) => isReviewer(p, a)));
  return { items: page.items.filter((_, i) => mine[i]).map((a) => approvalView(a)), nextCursor: encodeCursor(page.lastKey, binding) };
}

/** The users who may still decide a pending approval: its reviewers (roles resolved) who have not approved yet. */
async function stillToDecide(a: Approval): Promise<string[]> {
  if (a.status !== 'PENDING') return [];
  const named = a.reviewers.filter((r) => r.startsWith('user:')).map((r) => r.slice('user:'.length));
  const users = a.reviewers.some((r) => r.startsWith('role:'))
    ? (await listUsers(a.accountId)).filter((u) => a.reviewers.includes(`role:${u.role}`) || named.includes(u.userId)).map((u) => u.userId)
    : named;
  return users.filter((u) => !a.approvedBy?.includes(u));
}

/** v1 detail: the approval, its form and context, and its audit history. Reviewers only (else 403). */
export async function approvalDetail(p: Reader, approvalId: string) {
  const a = await requireApproval(p.accountId, approvalId);
  await assertReviewer(p, a);
  const [history, execution, pending, messages] = await Promise.all([
    listAudit(p.accountId, approvalId),
    getExecution(p.accountId, a.executionId),
    stillToDecide(a),
    listApprovalMessages(p.accountId, approvalId),
  ]);
  return {
    ...approvalView(a, history),
    decisions: history
      .filter((h) => h.outcome === 'decided')
      .map((h) => ({
        decidedBy: h.userId ?? h.channel,
        decision: h.decision ?? null,
        channel: h.channel,
        at: h.at,
        comment: h.comment ?? null,
      })),
    pendingReviewers: pending,
    ...notifiedView(a, messages),
    context: execution ? { executionStatus: execution.status, trigger: execution.trigger, variables: execution.variables } : null,
  };
}
