import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as deleteByKey } from '../../functions/http/workflows/delete-by-key.ts';
import { handler as deleteHandler } from '../../functions/http/workflows/delete.ts';
import { handler as getHandler } from '../../functions/http/workflows/get.ts';
import { handler as putByKey } from '../../functions/http/workflows/put-by-key.ts';
import { db, tableName } from '../../shared/clients.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { listWorkflows, listWorkflowVersions } from '../../shared/db/entities/workflow.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/** Workflows as code through the by-key routes (`PUT`/`DELETE /api/workflow-keys/{key}`), in-process on the emulators. */

const put = (session: string, key: string, body: object, dryRun = false) =>
  invoke(
    putByKey,
    apiEvent({
      method: 'PUT',
      path: `/api/workflow-keys/${key}`,
      params: { key },
      headers: bearer(session),
      body,
      ...(dryRun ? { query: { dryRun: 'true' } } : {}),
    }),
  );
const del = (session: string, key: string) =>
  invoke(deleteByKey, apiEvent({ method: 'DELETE', path: `/api/workflow-keys/${key}`, params: { key }, headers: bearer(session) }));

const definition = (x = 1) => ({ steps: [{ id: 'a', type: 'set', values: { x } }] });
const file = (x = 1) => ({ name: 'Coded', definition: definition(x), origin: 'git@example.com:acme/flows.git workflows/coded.json' });

/** Every item of the account's partition: what a dry run must leave as it was. */
const partition = async (accountId: string) =>
  (
    await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `ACC#${accountId}` },
      }),
    )
  ).Items ?? [];

let a: Awaited<ReturnType<typeof givenAccount>>;
let b: Awaited<ReturnType<typeof givenAccount>>;
let adminA: string;
let memberA: string;
let adminB: string;
beforeAll(async () => {
  [a, b] = await Promise.all([givenAccount(), givenAccount()]);
  [adminA, memberA, adminB] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email), sessionOf(b.admin.email)]);
});

describe('PUT /api/workflow-keys/{key}', () => {
  it('a dry run checks and answers what would change, writing nothing', async () => {
    const before = await partition(a.account.accountId);
    const res = await put(adminA, 'dry', file(), true);
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({ key: 'dry', action: 'create', workflowId: null, version: null, before: null });
    expect(res.json.after).toMatchObject({ name: 'Coded', definition: definition() });
    expect(await partition(a.account.accountId)).toEqual(before);
    // Its checks are a save's: a definition the server refuses is refused by the dry run too.
    expectProblem(
      await put(adminA, 'dry', { ...file(), definition: { steps: [{ id: 'a', type: 'set', values: {}, next: 'gone' }] } }, true),
      400,
      'VALIDATION_FAILED',
    );
    expect(await partition(a.account.accountId)).toEqual(before);
  });

  it('creates once, then leaves an equal file unchanged (no version), records the change with the CLI channel', async () => {
    const created = await put(adminA, 'coded', file());
    expect(created.json).toMatchObject({
      action: 'create',
      version: 1,
      changed: ['name', 'description', 'recovery', 'editors', 'definition'],
    });
    const id = created.json.workflowId as string;
    const view = await invoke(getHandler, apiEvent({ path: `/api/workflows/${id}`, params: { id }, headers: bearer(adminA) }));
    expect(view.json.code).toEqual({ key: 'coded', origin: 'git@example.com:acme/flows.git workflows/coded.json' });

    const again = await put(adminA, 'coded', file());
    expect(again.json).toMatchObject({ action: 'unchanged', workflowId: id, version: 1, changed: [] });
    expect((await listWorkflowVersions(a.account.accountId, id, 10)).items).toHaveLength(1);

    const edited = await put(adminA, 'coded', { ...file(2), description: 'now described' });
    expect(edited.json).toMatchObject({ action: 'update', version: 2, changed: ['description', 'definition'] });
    expect(edited.json.before.definition).toEqual(definition(1));
    expect(edited.json.after.definition).toEqual(definition(2));
    const log = await listAuditEntries({ accountId: a.account.accountId, objectType: 'workflow', objectId: id }, 10);
    expect(log.items.map((e) => [e.action, e.channel])).toEqual([
      ['workflow.updated', 'cli'],
      ['workflow.created', 'cli'],
    ]);
  });

  it('keys are per account: another account gets a workflow of its own, and cannot delete ours', async () => {
    await put(adminA, 'shared-name', file());
    const theirs = await put(adminB, 'shared-name', file(3));
    expect(theirs.json).toMatchObject({ action: 'create' });
    expectProblem(await del(adminB, 'coded'), 404, 'WORKFLOW_NOT_FOUND');
    expect((await listWorkflows(a.account.accountId, 100)).items.some((w) => w.code?.key === 'coded')).toBe(true);
  });

  it('refuses a malformed key (400), a member who may not edit (403), a key another workflow has (409)', async () => {
    expectProblem(await put(adminA, 'Not%20A%20Key', file()), 400, 'VALIDATION_FAILED');
    await put(adminA, 'admins', file());
    expectProblem(await put(memberA, 'admins', file(5), true), 403, 'NOT_WORKFLOW_EDITOR');
    expectProblem(await put(memberA, 'admins', file(5)), 403, 'NOT_WORKFLOW_EDITOR');
    const console = await createWorkflow(adminSession(a), {
      name: 'From the console',
      definition: WorkflowDefinition.parse(definition()),
      recovery: false,
      editors: [],
    });
    expectProblem(await put(adminA, 'admins', { ...file(), adopt: console.workflowId }), 409, 'WORKFLOW_KEY_TAKEN');
  });

  it('export adopts a workflow made in the console: its key and mark, no new version; then it is found by its key', async () => {
    const made = await createWorkflow(adminSession(a), {
      name: 'Adopted',
      definition: WorkflowDefinition.parse(definition(7)),
      recovery: false,
      editors: [],
    });
    const adopted = await put(adminA, 'adopted', { name: 'Adopted', definition: definition(7), adopt: made.workflowId });
    expect(adopted.json).toMatchObject({ action: 'update', changed: ['key'], workflowId: made.workflowId, version: 1 });
    expect(await put(adminA, 'adopted', { name: 'Adopted', definition: definition(7) })).toMatchObject({
      json: { action: 'unchanged', workflowId: made.workflowId },
    });
    // Once under a key it is taken under no other.
    expectProblem(
      await put(adminA, 'other-key', { name: 'Adopted', definition: definition(7), adopt: made.workflowId }),
      409,
      'WORKFLOW_KEY_TAKEN',
    );
  });

  it('two applies creating one key at once make one workflow', async () => {
    const results = await Promise.all([put(adminA, 'raced', file()), put(adminA, 'raced', file()), put(adminA, 'raced', file())]);
    for (const r of results) expect([200, 409]).toContain(r.status);
    expect(results.filter((r) => r.json?.action === 'create')).toHaveLength(1);
    expect((await listWorkflows(a.account.accountId, 100)).items.filter((w) => w.code?.key === 'raced')).toHaveLength(1);
  });
});

describe('deleting a workflow managed by code', () => {
  it('by key deletes it; from the console frees its key too', async () => {
    const first = await put(adminA, 'short-lived', file());
    expect((await del(adminA, 'short-lived')).status).toBe(204);
    expectProblem(await del(adminA, 'short-lived'), 404, 'WORKFLOW_NOT_FOUND');
    const second = await put(adminA, 'short-lived', file());
    expect(second.json.action).toBe('create');
    expect(second.json.workflowId).not.toBe(first.json.workflowId);
    const id = second.json.workflowId as string;
    expect(
      (await invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/workflows/${id}`, params: { id }, headers: bearer(adminA) })))
        .status,
    ).toBe(204);
    expect((await put(adminA, 'short-lived', file())).json.action).toBe('create');
  });
});
