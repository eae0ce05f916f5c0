import { type Approval, listApprovalsByStatus } from '../db/entities/approval.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { AppError } from '../errors.ts';
import { logger } from '../logger.ts';
import { BULK_OUTCOMES, type INBOX_SORTS } from '../schemas/approvals.ts';
import { Id } from '../schemas/common.ts';
import { approvalView } from './approval-reads.ts';
import { decide, type DecisionRequest, formValues, isReviewer, requireApproval } from './approvals.ts';
import { awaitsDecisionOf, PENDING_LOOKED_AT } from './pending-for-me.ts';
import type { Principal } from './principal.ts';

// The console's approvals inbox: its page of pending approvals (oldest first, or the account's oldest
// pending sorted by deadline), the navigation's count of those waiting for the reader, and deciding
// several at once, each through the one `decide` of every channel.

type Person = Extract<Principal, { kind: 'session' }>;

export type InboxSort = (typeof INBOX_SORTS)[number];

/**
 * The navigation's count: the approvals waiting for the reader's decision among the account's
 * `PENDING_LOOKED_AT` oldest pending ones (the overview's "waiting for you"); `more`: the account has
 * other pending approvals that were not looked through, so the count is a lower bound ("3+").
 */
export type Waiting = { count: number; more: boolean };

/**
 * Whether approving from the step's defaults alone would be refused (a required field without a default):
 * such an approval is approved on its page, with its form, never from the inbox. The same rules as `decide`.
 */
export function needsForm(a: Approval): boolean {
  try {
    formValues(a, {}, true);
    return false;
  } catch (e) {
    if (e instanceof AppError && e.code === 'VALIDATION_FAILED') return true;
    throw e;
  }
}

/** A row of the inbox: the approval as the API shows it, whether the reader reviews it, has voted on it, must open it to approve. */
export type InboxRow = ReturnType<typeof approvalView> & { mine: boolean; voted: boolean; needsForm: boolean };

/** Deadline soonest first, approvals without one last; the listing's order (oldest first) among equals. */
const byDeadline = (a: InboxRow, b: InboxRow) => (a.expiresAt ?? Number.POSITIVE_INFINITY) - (b.expiresAt ?? Number.POSITIVE_INFINITY);

/**
 * A page of the inbox: the account's pending approvals the reader reviews (`all`: every one; the caller
 * checks the role). One read of the status listing, `PENDING_LOOKED_AT` approvals a page (its shards'
 * Queries, keys only, then one BatchGet), as the overview reads it, so the first page also gives the
 * navigation's count (`waiting`) for nothing more. `deadline` sorts that first page (the account's
 * `PENDING_LOOKED_AT` oldest pending) by deadline and has no next page: `more` says others are pending
 * beyond it (the oldest-first pages list every one). The cursor is bound to the reader and the scope, as
 * the v1 list's (`pageApprovals`).
 */
export async function inboxPage(p: Person, opts: { all: boolean; sort: InboxSort; cursor?: string | undefined }) {
  const binding = `approvals:${p.accountId}:${p.userId}:PENDING${opts.all ? ':all' : ''}`;
  // A cursor means nothing to the deadline order (it sorts one read): it is ignored there.
  const start = opts.sort === 'deadline' ? undefined : decodeCursor(opts.cursor, binding);
  const page = await listApprovalsByStatus(p.accountId, 'PENDING', PENDING_LOOKED_AT, start);
  const reviews = await Promise.all(page.items.map((a) => isReviewer(p, a)));
  const rows: InboxRow[] = page.items.flatMap((a, i) =>
    opts.all || reviews[i]
      ? [{ ...approvalView(a), mine: !!reviews[i], voted: !!a.approvedBy?.includes(p.userId), needsForm: needsForm(a) }]
      : [],
  );
  const more = page.lastKey !== undefined;
  return {
    items: opts.sort === 'deadline' ? rows.sort(byDeadline) : rows,
    nextCursor: opts.sort === 'deadline' ? null : encodeCursor(page.lastKey, binding),
    more,
    /** The navigation's count, when this read was the account's oldest pending (a first page). */
    waiting: start === undefined ? ({ count: page.items.filter((a) => awaitsDecisionOf(p, a)).length, more } satisfies Waiting) : undefined,
  };
}

/** Approvals one inbox form decides at most: a page of it. */
export const BULK_MAX = PENDING_LOOKED_AT;
/** Decisions made at once (each its own reads and transaction). */
const PARALLEL = 4;

export type BulkOutcome = (typeof BULK_OUTCOMES)[number];

/** One approval of a bulk decision: `decide`'s answer, or its refusal, as an outcome. */
async function decideOne(req: DecisionRequest): Promise<BulkOutcome> {
  if (!Id.safeParse(req.approvalId).success) return 'refused';
  try {
    if (req.decision === 'approve') {
      // An approval with a required field left to its form is not approved with its defaults: nothing is tried, nothing audited.
      const a = await requireApproval(req.principal.accountId, req.approvalId);
      if (a.status === 'PENDING' && needsForm(a)) return 'needsform';
    }
    const decided = await decide(req);
    if (req.decision === 'reject') return 'rejected';
    return decided.status === 'APPROVED' ? 'approved' : 'voted';
  } catch (e) {
    if (e instanceof AppError) {
      if (e.code === 'APPROVAL_ALREADY_HANDLED' || e.code === 'REVIEWER_ALREADY_DECIDED') return 'handled';
      // Not a reviewer, or no such approval in this account (another account's id is the same): nothing changed.
      if (e.code === 'NOT_A_REVIEWER' || e.kind === 'not_found') return 'refused';
      if (e.code === 'VALIDATION_FAILED') return 'needsform';
    }
    // Anything else ends this one decision, not the others: the summary says it failed, the log says why.
    logger.error('bulk decision failed', { approvalId: req.approvalId, error: e as Error });
    return 'failed';
  }
}

/**
 * Decide several approvals the same way, each as the approval page decides one (`decide`: reviewers only,
 * open, quorum, exactly once, its own transaction and audit record, channel `console`), without a comment
 * or form values. The ids are deduplicated; at most `BULK_MAX` (the caller refuses more). Returns how many
 * ended each way.
 */
export async function decideMany(
  base: Omit<DecisionRequest, 'approvalId' | 'formData' | 'comment'>,
  approvalIds: readonly string[],
): Promise<Record<BulkOutcome, number>> {
  const ids = [...new Set(approvalIds)];
  const counts = Object.fromEntries(BULK_OUTCOMES.map((o) => [o, 0])) as Record<BulkOutcome, number>;
  for (let i = 0; i < ids.length; i += PARALLEL) {
    const outcomes = await Promise.all(ids.slice(i, i + PARALLEL).map((approvalId) => decideOne({ ...base, approvalId })));
    for (const o of outcomes) counts[o] += 1;
  }
  return counts;
}
