import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { executionKey } from './execution.ts';
import { userKey } from './user.ts';
import { workflowKey } from './workflow.ts';

// The runs, workflows and people a console page names beside its rows (the approval pages: the runs'
// inputs and status, the workflows' names, the deciders' and reviewers' emails), in one projected
// BatchGet per page, whatever the number of rows.

type Key = { PK: string; SK: string };
const PROJECTION = '#pk, #sk, #status, variables, #name, email, userId';
const NAMES = { '#pk': 'PK', '#sk': 'SK', '#status': 'status', '#name': 'name' };

/** What a page shows of each: a run's status and inputs (as stored: JSON text), a workflow's name, a member's email. */
export type Named = {
  runs: Map<string, { status: string; variables: unknown }>;
  workflows: Map<string, string>;
  /** userId → email. */
  people: Map<string, string>;
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
export async function readNamed(
  accountId: string,
  named: { executionIds?: readonly string[]; workflowIds?: readonly string[]; userIds?: readonly string[] },
): Promise<Named> {
  const unique = (ids: readonly string[] = []) => [...new Set(ids)];
  const keys = [
    ...unique(named.executionIds).map((id) => executionKey(accountId, id)),
    ...unique(named.workflowIds).map((id) => workflowKey(accountId, id)),
    ...unique(named.userIds).map((id) => userKey(accountId, id)),
  ];
  const found: Named = { runs: new Map(), workflows: new Map(), people: new Map() };
  if (keys.length === 0) return found;
  for (const item of await projectedGet(keys)) {
    const pk = String(item.PK);
    const sk = String(item.SK);
    if (sk === 'EXECUTION') found.runs.set(pk.split('#')[2] as string, { status: String(item.status), variables: item.variables });
    else if (sk.startsWith('WF#')) found.workflows.set(sk.slice('WF#'.length), String(item.name));
    else if (sk.startsWith('USER#')) found.people.set(sk.slice('USER#'.length), String(item.email));
  }
  return found;
}
