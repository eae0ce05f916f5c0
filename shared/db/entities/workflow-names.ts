import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { getProjected } from '../projected.ts';
import { workflowKey } from './workflow.ts';

// Workflows' names for lists (runs, approvals) without their definitions: only the id and the name of
// each item travel (a definition can be 256 KiB).

export type WorkflowName = { workflowId: string; name: string };

const ATTRIBUTES = ['PK', 'SK', 'workflowId', 'name'];
const named = (i: Record<string, unknown>): WorkflowName => ({ workflowId: String(i.workflowId), name: String(i.name) });

/** The names of these workflows of the account (at most 100 ids; one BatchGet, none for no ids). Unknown ids are left out. */
export async function workflowNames(accountId: string, workflowIds: Iterable<string>): Promise<Map<string, string>> {
  const ids = [...new Set(workflowIds)];
  const items = await getProjected(
    ids.map((id) => workflowKey(accountId, id)),
    ATTRIBUTES,
  );
  return new Map(items.map(named).map((w) => [w.workflowId, w.name]));
}

/** The account's newest `limit` workflows (at most 100), id and name: one Query. `more`: there are others. */
export async function workflowChoices(accountId: string, limit: number): Promise<{ items: WorkflowName[]; more: boolean }> {
  const res = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'WF#' },
      ProjectionExpression: ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(ATTRIBUTES.map((a, i) => [`#a${i}`, a])),
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return { items: (res.Items ?? []).map(named), more: res.LastEvaluatedKey !== undefined };
}
