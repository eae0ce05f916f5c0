import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { type Approval, type AuditRecord, listAudit } from '../db/entities/approval.ts';
import { executionKey } from '../db/entities/execution.ts';
import { userKey } from '../db/entities/user.ts';
import { workflowKey } from '../db/entities/workflow.ts';
import { isReviewer, requireApproval } from '../domain/approvals.ts';
import type { Reader } from '../domain/approval-reads.ts';

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

type Key = { PK: string; SK: string };
const PROJECTION = '#pk, #sk, #status, variables, #name, email, userId';
const NAMES = { '#pk': 'PK', '#sk': 'SK', '#status': 'status', '#name': 'name' };

const parseJson = (v: unknown): Record<string, unknown> | undefined => {
  if (typeof v !== 'string') return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  try {
    const parsed = JSON.parse(v) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};

/** One BatchGet (projected: the few attributes shown, never a run's steps or outputs), its unprocessed keys asked again. */
async function projectedGet(keys: Key[]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending = keys.slice(i, i + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 3) throw new Error('BatchGet left keys unprocessed three times');
      const res = await db().send(
        new BatchGetCommand({
          RequestItems: { [tableName()]: { Keys: pending, ProjectionExpression: PROJECTION, ExpressionAttributeNames: NAMES } },
        }),
      );
      items.push(...(res.Responses?.[tableName()] ?? []));
      pending = (res.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
    }
  }
  return items;
}

/** The runs, workflows and users of an account that a page names, read together (nothing read when nothing is named). */
export async function factsOf(
  accountId: string,
  named: { executionIds?: readonly string[]; workflowIds?: readonly string[]; userIds?: readonly string[] },
): Promise<Facts> {
  const unique = (ids: readonly string[] = []) => [...new Set(ids)];
  const keys = [
    ...unique(named.executionIds).map((id) => executionKey(accountId, id)),
    ...unique(named.workflowIds).map((id) => workflowKey(accountId, id)),
    ...unique(named.userIds).map((id) => userKey(accountId, id)),
  ];
  const facts: Facts = { runs: new Map(), workflows: new Map(), people: new Map() };
  if (keys.length === 0) return facts;
  for (const item of await projectedGet(keys)) {
    const pk = String(item.PK);
    const sk = String(item.SK);
    if (sk === 'EXECUTION')
      facts.runs.set(pk.split('#')[2] as string, { status: String(item.status), variables: parseJson(item.variables) });
    else if (sk.startsWith('WF#')) facts.workflows.set(sk.slice('WF#'.length), String(item.name));
    else if (sk.startsWith('USER#')) facts.people.set(sk.slice('USER#'.length), String(item.email));
  }
  return facts;
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
