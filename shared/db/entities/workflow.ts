import { type TransactItem, writeWith } from '../transact.ts';
import { applied } from '../update.ts';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure, conflict, isTransactionConflict } from '../../errors.ts';
import { asJsonText, jsonText } from '../json.ts';
import { getItems, queryPage } from '../query.ts';

// Access patterns: get by account + id · list by account, newest first (PK, SK begins_with WF#) ·
// one version of a workflow (PK ACC#<account>, SK WFV#<workflow>#<version>), which runs reference.
/**
 * A definition as stored: a JSON object, opaque to the db layer. The engine validated it when it was
 * saved (defaults applied, expressions compiled) and narrows it to its own type when it reads one
 * (`definitionOf`, shared/engine/versions.ts), so reads neither repeat that work nor break if the
 * rules tighten later.
 */
export const StoredDefinition = z.custom<unknown>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  'not a stored workflow definition',
);
export type StoredDefinition = z.infer<typeof StoredDefinition>;

/**
 * A workflow managed by code (docs/workflows-as-code.md): its key, unique in the account (a key item
 * claims it: ./workflow-keys.ts), and where the files it is applied from live, as the applier said.
 */
export const WorkflowCode = z.object({ key: z.string(), origin: z.string().optional() });
export type WorkflowCode = z.infer<typeof WorkflowCode>;

export const Workflow = z.object({
  workflowId: z.string(),
  accountId: z.string(),
  name: z.string(),
  description: z.string().optional(),
  definition: jsonText(StoredDefinition),
  recovery: z.boolean(),
  ownerId: z.string(),
  editors: z.array(z.string()),
  createdAt: z.number(),
  updatedAt: z.number(),
  /** Incremented by every update; updates are conditional on the version read. */
  version: z.number(),
  /** Who saved the current version (absent on workflows last saved before it was recorded). */
  updatedBy: z.string().optional(),
  /** Set when the workflow is applied from a folder of workflow files (`flowgate apply`, a stack's workflows). */
  code: WorkflowCode.optional(),
});
export type Workflow = z.infer<typeof Workflow>;

export const workflowKey = (accountId: string, workflowId: string) => ({ PK: `ACC#${accountId}`, SK: `WF#${workflowId}` });

/** Transaction item: the workflow still exists (a deleted one takes its webhooks and schedules with it: none may follow). */
export const workflowStillThere = (accountId: string, workflowId: string): TransactItem => ({
  ConditionCheck: { TableName: tableName(), Key: workflowKey(accountId, workflowId), ConditionExpression: 'attribute_exists(PK)' },
});
const parse = (i: Record<string, unknown>) => Workflow.parse(i);

export async function getWorkflow(accountId: string, workflowId: string): Promise<Workflow | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: workflowKey(accountId, workflowId) }));
  return Item ? parse(Item) : undefined;
}

/**
 * What a run executes: one version of a workflow, written with it and never changed (runs reference it
 * by number; the worker caches it for good). Kept when the workflow is deleted, for its runs.
 */
export const WorkflowVersion = Workflow.pick({ workflowId: true, accountId: true, version: true, definition: true, recovery: true }).extend(
  {
    /** When and by whom (a user id) the version was saved; absent on versions saved before they were recorded. */
    createdAt: z.number().optional(),
    createdBy: z.string().optional(),
  },
);
export type WorkflowVersion = z.infer<typeof WorkflowVersion>;
/** A version as the list of versions has it: who saved it and when, without its definition. */
export const VersionEntry = WorkflowVersion.pick({ version: true, createdAt: true, createdBy: true });
export type VersionEntry = z.infer<typeof VersionEntry>;

/** The version item of a workflow as saved: its content, when and by whom (the first version's author is its owner). */
export const versionOf = (w: Workflow): WorkflowVersion => ({
  ...WorkflowVersion.omit({ createdAt: true, createdBy: true }).parse(w),
  createdAt: w.updatedAt,
  ...(w.updatedBy ? { createdBy: w.updatedBy } : w.version === 1 ? { createdBy: w.ownerId } : {}),
});

const versionKey = (accountId: string, workflowId: string, version: number) => ({
  PK: `ACC#${accountId}`,
  SK: `WFV#${workflowId}#${String(version).padStart(10, '0')}`,
});

export async function getWorkflowVersion(accountId: string, workflowId: string, version: number): Promise<WorkflowVersion | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: versionKey(accountId, workflowId, version) }));
  return Item ? WorkflowVersion.parse(Item) : undefined;
}

export const workflowChanged = () => conflict('WORKFLOW_CHANGED', 'The workflow was changed or deleted meanwhile; read it again.');

/** Create (`expectedVersion` undefined) or replace the version that was read (optimistic concurrency), with its version item. */
export async function putWorkflow(w: Workflow, expectedVersion?: number, extra: readonly TransactItem[] = []): Promise<void> {
  const version = versionOf(w);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: tableName(),
              Item: { ...workflowKey(w.accountId, w.workflowId), type: 'workflow', ...asJsonText(w, ['definition']) },
              ConditionExpression: expectedVersion === undefined ? 'attribute_not_exists(PK)' : 'version = :v',
              ExpressionAttributeValues: expectedVersion === undefined ? undefined : { ':v': expectedVersion },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...versionKey(w.accountId, w.workflowId, w.version),
                type: 'workflowVersion',
                ...asJsonText(version, ['definition']),
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          ...extra,
        ],
      }),
    );
  } catch (e) {
    if (isConditionFailure(e) || isTransactionConflict(e)) throw workflowChanged();
    throw e;
  }
}

/** Delete (with `extra` in the same transaction); false when it was gone already (nothing written). */
export async function deleteWorkflow(accountId: string, workflowId: string, extra: readonly TransactItem[] = []): Promise<boolean> {
  return applied(
    writeWith(
      { Delete: { TableName: tableName(), Key: workflowKey(accountId, workflowId), ConditionExpression: 'attribute_exists(PK)' } },
      extra,
    ),
  );
}

/** A page of a workflow's versions, newest first, without their definitions. */
export const listWorkflowVersions = (accountId: string, workflowId: string, limit: number, startKey?: Record<string, unknown>) =>
  queryPage(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': `WFV#${workflowId}#` },
      ProjectionExpression: 'PK, SK, version, createdAt, createdBy',
      ScanIndexForward: false,
    },
    (i) => VersionEntry.parse(i),
    limit,
    startKey,
  );

export const listWorkflows = (accountId: string, limit: number, startKey?: Record<string, unknown>) =>
  queryPage(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'WF#' },
      ScanIndexForward: false,
    },
    parse,
    limit,
    startKey,
  );

/** Which of these workflows exist, as `<accountId>/<workflowId>`: a consistent read of their keys only. */
export async function existingWorkflows(ids: readonly { accountId: string; workflowId: string }[]): Promise<Set<string>> {
  const wanted = [...new Set(ids.map((w) => `${w.accountId}/${w.workflowId}`))];
  const keys = wanted.map((id) => workflowKey(id.slice(0, id.indexOf('/')), id.slice(id.indexOf('/') + 1)));
  const found = await getItems(keys, true, 'PK, SK');
  return new Set(found.map((k) => `${String(k.PK).slice('ACC#'.length)}/${String(k.SK).slice('WF#'.length)}`));
}
