import { type Approval, listApprovalsByStatus } from '../db/entities/approval.ts';
import type { Principal } from './principal.ts';

type Person = Pick<Extract<Principal, { kind: 'session' }>, 'accountId' | 'userId' | 'role'>;

/**
 * Whether `p` may still decide `a`: a reviewer by id or by role (the session's role, read with the
 * session on this request: no read more), who has not approved it yet (a quorum's vote is once).
 */
export const awaitsDecisionOf = (p: Person, a: Pick<Approval, 'reviewers' | 'approvedBy'>) =>
  (a.reviewers.includes(`user:${p.userId}`) || a.reviewers.includes(`role:${p.role}`)) && !a.approvedBy?.includes(p.userId);

/** Pending approvals the overview looks through: the account's oldest this many (one merged page). */
export const PENDING_LOOKED_AT = 50;

/**
 * The account's pending approvals that `p` may decide, oldest first, among its `PENDING_LOOKED_AT`
 * oldest pending ones (`more`: there are others pending, the inbox lists them all). DynamoDB calls:
 * the status listing's shards (max(16, LIST_SHARDS), and the listing of before the upgrade) in
 * parallel, keys only, and one BatchGet of the approvals. `pending`: how many of the account's were looked
 * through (all of its pending approvals unless `more`).
 */
export async function pendingFor(p: Person) {
  const page = await listApprovalsByStatus(p.accountId, 'PENDING', PENDING_LOOKED_AT);
  return { items: page.items.filter((a) => awaitsDecisionOf(p, a)), pending: page.items.length, more: page.lastKey !== undefined };
}
