import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure, isTransactionConflict } from '../../errors.ts';
import { queryAll } from '../query.ts';
import type { TransactItem } from '../transact.ts';
import { buildUpdate } from '../update.ts';
import { type Workflow, type WorkflowCode, workflowChanged, workflowKey } from './workflow.ts';

// Workflows as code: a workflow is found by its key (PK ACC#<account>, SK WFKEY#<key> → its id). The key
// item is written in the same transaction as the workflow that takes the key and deleted with it, so a
// key names at most one workflow of the account, and two applies creating one key cannot both win.

const keyItem = (accountId: string, key: string) => ({ PK: `ACC#${accountId}`, SK: `WFKEY#${key}` });

/** The id of the account's workflow with this key (a consistent read), or undefined. */
export async function workflowIdByKey(accountId: string, key: string): Promise<string | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: keyItem(accountId, key), ConsistentRead: true }));
  return typeof Item?.workflowId === 'string' ? Item.workflowId : undefined;
}

/** The transaction item that gives `key` to a workflow: refused when another has it. */
export const claimWorkflowKey = (accountId: string, key: string, workflowId: string): TransactItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...keyItem(accountId, key), type: 'workflowKey', accountId, key, workflowId },
    ConditionExpression: 'attribute_not_exists(PK)',
  },
});

/** The transaction item that frees a workflow's key (with the workflow's delete). */
export const releaseWorkflowKey = (accountId: string, key: string): TransactItem => ({
  Delete: { TableName: tableName(), Key: keyItem(accountId, key) },
});

/**
 * Mark a workflow as managed by code, as read (`version` unchanged: its content is not changed, so no
 * version is made), claiming its key, with `extra` (its audit entry) in the same transaction.
 */
export async function markWorkflowCode(w: Workflow, code: WorkflowCode, extra: readonly TransactItem[]): Promise<void> {
  const update = buildUpdate(workflowKey(w.accountId, w.workflowId), { code }, [], {
    expression: 'version = :v',
    values: { ':v': w.version },
  });
  const claim = w.code?.key === code.key ? [] : [claimWorkflowKey(w.accountId, code.key, w.workflowId)];
  try {
    await db().send(new TransactWriteCommand({ TransactItems: [{ Update: update }, ...claim, ...extra] }));
  } catch (e) {
    if (isConditionFailure(e) || isTransactionConflict(e)) throw workflowChanged();
    throw e;
  }
}

/** The account's workflows managed by code: each one's id and key (every workflow item read, their ids and marks only). */
export const listCodeWorkflows = async (accountId: string): Promise<{ workflowId: string; key: string }[]> =>
  (
    await queryAll(
      {
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
        ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'WF#' },
        ProjectionExpression: 'workflowId, #code',
        ExpressionAttributeNames: { '#code': 'code' },
      },
      (i) => ({ workflowId: String(i.workflowId), key: (i.code as { key?: unknown } | undefined)?.key }),
    )
  ).flatMap((w) => (typeof w.key === 'string' ? [{ workflowId: w.workflowId, key: w.key }] : []));
