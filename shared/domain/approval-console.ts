import { type Approval, type AuditRecord, listAudit } from '../db/entities/approval.ts';
import { readNamed } from '../db/entities/named.ts';
import { isReviewer, requireApproval } from './approvals.ts';
import type { Reader } from './approval-reads.ts';
import { inputsOf } from './approval-facts.ts';

// What the console's approval pages read beside the approvals themselves, in as few calls as a page can:
// the runs' inputs and status, the workflows' names and the people named (deciders, reviewers) in one
// projected BatchGet per page, whatever the number of rows.

/** A run as the approval pages show it: its inputs and where it is. */
export type RunFacts = { status: string; variables: Record<string, unknown> | undefined };
/** The run, workflow and people an approval page names. */
export type Facts = {
  runs: Map<string, RunFacts>;
  workflows: Map<string, string>;
  /** userId → email. */
  people: Map<string, string>;
};

/** The runs, workflows and users of an account that a page names, read together (nothing read when nothing is named). */
export async function factsOf(
  accountId: string,
  named: { executionIds?: readonly string[]; workflowIds?: readonly string[]; userIds?: readonly string[] },
): Promise<Facts> {
  const { runs, workflows, people } = await readNamed(accountId, named);
  return { runs: new Map([...runs].map(([id, r]) => [id, { status: r.status, variables: inputsOf(r.variables) }])), workflows, people };
}

/** The users an approval names: its `user:` reviewers, its voters and those in its history. */
const namedUsers = (a: Approval, history: readonly AuditRecord[]) => [
  ...a.reviewers.filter((r) => r.startsWith('user:')).map((r) => r.slice('user:'.length)),
  ...(a.approvedBy ?? []),
  ...(a.decidedBy ? [a.decidedBy] : []),
  ...history.flatMap((h) => (h.userId ? [h.userId] : [])),
];

/**
 * The approval page's data: the approval (404 for an unknown id and another account's alike), its whole
 * history (decisions and refused attempts), whether the reader may decide it, and the run, workflow and
 * people it names. Three round trips' worth of calls: the approval and its history together, then one BatchGet.
 */
export async function approvalPageData(p: Reader, approvalId: string) {
  const [approval, history] = await Promise.all([requireApproval(p.accountId, approvalId), listAudit(p.accountId, approvalId)]);
  const [reviewer, facts] = await Promise.all([
    isReviewer(p, approval),
    factsOf(p.accountId, {
      executionIds: [approval.executionId],
      workflowIds: [approval.workflowId],
      userIds: namedUsers(approval, history),
    }),
  ]);
  return { approval, history, reviewer, facts };
}
export type ApprovalPageData = Awaited<ReturnType<typeof approvalPageData>>;
