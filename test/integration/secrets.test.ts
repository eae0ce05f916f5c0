import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as createWorkflowHandler } from '../../functions/http/workflows/create.ts';
import { handler as updateWorkflowHandler } from '../../functions/http/workflows/update.ts';
import { handler as createHandler } from '../../functions/http/secrets/create.ts';
import { handler as deleteHandler } from '../../functions/http/secrets/delete.ts';
import { handler as listHandler } from '../../functions/http/secrets/list.ts';
import { handler as updateHandler } from '../../functions/http/secrets/update.ts';
import { db, tableName } from '../../shared/clients.ts';
import { clearSecretCache, readSecrets } from '../../shared/db/secret-values.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { capturedLogs } from '../support/logs.ts';
import { sessionOf } from '../support/sessions.ts';

const create = (session: string, body: unknown) =>
  invoke(createHandler, apiEvent({ method: 'POST', path: '/api/secrets', headers: bearer(session), body: body as object }));
const list = (session: string) => invoke(listHandler, apiEvent({ path: '/api/secrets', headers: bearer(session) }));
const update = (session: string, name: string, body: unknown) =>
  invoke(
    updateHandler,
    apiEvent({ method: 'PUT', path: `/api/secrets/${name}`, headers: bearer(session), params: { name }, body: body as object }),
  );
const remove = (session: string, name: string) =>
  invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/secrets/${name}`, headers: bearer(session), params: { name } }));
const rawItem = async (accountId: string, name: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `SECRET#${accountId}`, SK: `SECRET#${name}` } }))).Item;
const value = (tag: string) => `${tag}-${randomBytes(12).toString('hex')}`;

async function givenAdmins() {
  const a = await givenAccount();
  const [adminSession, memberSession] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
  return { ...a, adminSession, memberSession };
}

describe('account secrets: console routes', () => {
  it('create, list, replace and delete; the value is in no answer and not in plaintext at rest', async () => {
    const { account, adminSession, memberSession } = await givenAdmins();
    const first = value('first');
    const created = await create(adminSession, { name: 'API_TOKEN', value: first });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/api/secrets/API_TOKEN');
    expect(created.json).toEqual({
      name: 'API_TOKEN',
      createdAt: expect.any(Number),
      updatedAt: created.json.createdAt,
      lastUsedAt: null,
      allowedHosts: null,
      members: 'none',
    });
    expect(created.body).not.toContain(first);

    const item = await rawItem(account.accountId, 'API_TOKEN');
    expect(item).toMatchObject({ name: 'API_TOKEN', kid: expect.stringMatching(/^file:/) });
    const raw = JSON.stringify(item);
    expect(raw).not.toContain(first);
    expect(raw).not.toContain(Buffer.from(first).toString('base64').slice(0, 16));
    expect(Buffer.from(item?.ct as string, 'base64').toString('latin1')).not.toContain(first.slice(0, 8));

    // Members read the names; nobody reads a value.
    await create(adminSession, { name: 'B_SECOND', value: value('second') });
    const listed = await list(memberSession);
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({
      items: [
        {
          name: 'API_TOKEN',
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
          lastUsedAt: null,
          allowedHosts: null,
          members: 'none',
        },
        {
          name: 'B_SECOND',
          createdAt: expect.any(Number),
          updatedAt: expect.any(Number),
          lastUsedAt: null,
          allowedHosts: null,
          members: 'none',
        },
      ],
      nextCursor: null,
    });
    expect(listed.body).not.toContain(first);
    expect(listed.body).not.toMatch(/"(ct|edk|iv|tag|kid|value)"/);

    const duplicate = await create(adminSession, { name: 'API_TOKEN', value: 'other' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.code).toBe('SECRET_EXISTS');
    clearSecretCache();
    expect((await readSecrets(account.accountId, ['API_TOKEN'], Date.now(), false)).values).toEqual({ API_TOKEN: first });

    const second = value('replaced');
    await new Promise((r) => setTimeout(r, 5));
    const replaced = await update(adminSession, 'API_TOKEN', { value: second });
    expect(replaced.status).toBe(200);
    expect(replaced.json).toMatchObject({ name: 'API_TOKEN', createdAt: created.json.createdAt });
    expect(replaced.json.updatedAt).toBeGreaterThan(created.json.createdAt);
    expect(replaced.body).not.toContain(second);
    const after = await rawItem(account.accountId, 'API_TOKEN');
    expect(after?.ct).not.toBe(item?.ct);
    expect(after?.edk).not.toBe(item?.edk);
    expect(JSON.stringify(after)).not.toContain(second);
    expect((await readSecrets(account.accountId, ['API_TOKEN'], Date.now(), false)).values).toEqual({ API_TOKEN: second });

    const deleted = await remove(adminSession, 'API_TOKEN');
    expect(deleted.status).toBe(204);
    expect(await rawItem(account.accountId, 'API_TOKEN')).toBeUndefined();
    expect((await readSecrets(account.accountId, ['API_TOKEN'], Date.now(), false)).missing).toEqual(['API_TOKEN']);
    for (const res of [await remove(adminSession, 'API_TOKEN'), await update(adminSession, 'API_TOKEN', { value: 'x' })]) {
      expect(res.status).toBe(404);
      expect(res.json.code).toBe('SECRET_NOT_FOUND');
    }
    expect((await list(adminSession)).json.items.map((s: { name: string }) => s.name)).toEqual(['B_SECOND']);
  });

  it('answers members 403 on every write and changes nothing', async () => {
    const { account, adminSession, memberSession } = await givenAdmins();
    const v = value('kept');
    await create(adminSession, { name: 'KEPT', value: v });
    const before = await rawItem(account.accountId, 'KEPT');
    for (const res of [
      await create(memberSession, { name: 'MINE', value: 'x' }),
      await update(memberSession, 'KEPT', { value: 'changed' }),
      await remove(memberSession, 'KEPT'),
    ]) {
      expect(res.status).toBe(403);
      expect(res.json.code).toBe('ADMIN_ONLY');
    }
    expect(await rawItem(account.accountId, 'KEPT')).toEqual(before);
    expect(await rawItem(account.accountId, 'MINE')).toBeUndefined();
    expect((await invoke(listHandler, apiEvent({ path: '/api/secrets' }))).status).toBe(401);
  });

  it('refuses bad names and values with 400 and the path, writing nothing', async () => {
    const { adminSession } = await givenAdmins();
    const euro = '€'; // 3 bytes of UTF-8
    for (const [body, path] of [
      [{ name: 'lower', value: 'x' }, 'name'],
      [{ name: '1ABC', value: 'x' }, 'name'],
      [{ name: '_ABC', value: 'x' }, 'name'],
      [{ name: 'A-B', value: 'x' }, 'name'],
      [{ name: `A${'B'.repeat(64)}`, value: 'x' }, 'name'],
      [{ name: '', value: 'x' }, 'name'],
      [{ name: 'OK', value: '' }, 'value'],
      [{ name: 'OK', value: 'x'.repeat(8193) }, 'value'],
      [{ name: 'OK', value: euro.repeat(2731) }, 'value'],
      [{ name: 'OK', value: 42 }, 'value'],
      [{ name: 'OK', value: 'half a pair \ud800' }, 'value'],
      [{ name: 'OK' }, 'value'],
      [{ value: 'x' }, 'name'],
    ] as const) {
      const res = await create(adminSession, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json.code).toBe('VALIDATION_FAILED');
      expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await list(adminSession)).json.items).toEqual([]);
    // Up to 8 KiB is a value.
    expect((await create(adminSession, { name: 'BIG', value: 'x'.repeat(8192) })).status).toBe(201);
    expect((await create(adminSession, { name: 'BIG_UTF8', value: euro.repeat(2730) })).status).toBe(201);
    // A malformed name in the path cannot exist: 404, like every malformed id.
    expect((await update(adminSession, 'lower', { value: 'x' })).status).toBe(404);
    expect((await remove(adminSession, 'A-B')).status).toBe(404);
    expect((await update(adminSession, 'BIG', { value: '' })).status).toBe(400);
  });

  it("keeps accounts apart: another account's secret is not found, not listed and never read for it", async () => {
    const a = await givenAdmins();
    const b = await givenAdmins();
    const secretOfA = value('only-a');
    await create(a.adminSession, { name: 'SHARED_NAME', value: secretOfA });
    expect((await update(b.adminSession, 'SHARED_NAME', { value: 'hijack' })).status).toBe(404);
    expect((await remove(b.adminSession, 'SHARED_NAME')).status).toBe(404);
    expect((await list(b.adminSession)).json.items).toEqual([]);
    expect((await readSecrets(b.account.accountId, ['SHARED_NAME'], Date.now(), false)).missing).toEqual(['SHARED_NAME']);

    // The same name in B is B's own; A's value is unchanged.
    const secretOfB = value('only-b');
    expect((await create(b.adminSession, { name: 'SHARED_NAME', value: secretOfB })).status).toBe(201);
    clearSecretCache();
    expect((await readSecrets(a.account.accountId, ['SHARED_NAME'], Date.now(), false)).values.SHARED_NAME).toBe(secretOfA);
    expect((await readSecrets(b.account.accountId, ['SHARED_NAME'], Date.now(), false)).values.SHARED_NAME).toBe(secretOfB);

    // A's sealed value copied into B's item does not open there: the account is bound into it.
    const itemOfA = await rawItem(a.account.accountId, 'SHARED_NAME');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...itemOfA, PK: `SECRET#${b.account.accountId}`, SK: 'SECRET#COPIED', accountId: b.account.accountId, name: 'COPIED' },
      }),
    );
    await expect(readSecrets(b.account.accountId, ['COPIED'], Date.now(), false)).rejects.toThrow();
  });

  it('writes no value to the logs', async () => {
    const { adminSession } = await givenAdmins();
    const v1 = value('logged-create');
    const v2 = value('logged-update');
    const out = await capturedLogs(async () => {
      await create(adminSession, { name: 'LOGGED', value: v1 });
      await update(adminSession, 'LOGGED', { value: v2 });
      await create(adminSession, { name: 'LOGGED', value: v1 }); // 409
      await create(adminSession, { name: 'bad', value: v1 }); // 400
      await list(adminSession);
    });
    expect(out).toContain('"message":"request"');
    expect(out).not.toContain(v1);
    expect(out).not.toContain(v2);
  });
});

const saveWorkflow = (session: string, definition: unknown, editors: string[] = []) =>
  invoke(
    createWorkflowHandler,
    apiEvent({ method: 'POST', path: '/api/workflows', headers: bearer(session), body: { name: 'uses secrets', definition, editors } }),
  );
const callWith = (secret: string, url = 'https://api.crm.example/deals') => ({
  steps: [{ id: 'call', type: 'http_request', url, headers: { authorization: `{% 'Bearer ' & $secrets.${secret} %}` } }],
});

describe('account secrets: where they may go and who may use them', () => {
  it('sets allowedHosts and members on create and PUT, shows them, and keeps what a PUT leaves out', async () => {
    const { adminSession, memberSession } = await givenAdmins();
    const created = await create(adminSession, {
      name: 'CRM',
      value: value('crm'),
      allowedHosts: ['API.crm.example.', '*.crm.example'],
      members: 'use',
    });
    expect(created.status, created.body).toBe(201);
    expect(created.json).toMatchObject({ allowedHosts: ['api.crm.example', '*.crm.example'], members: 'use' });
    const valueOnly = await update(adminSession, 'CRM', { value: value('again') });
    expect(valueOnly.json).toMatchObject({ allowedHosts: ['api.crm.example', '*.crm.example'], members: 'use' });
    const unbound = await update(adminSession, 'CRM', { allowedHosts: null, members: 'none' });
    expect(unbound.status, unbound.body).toBe(200);
    expect(unbound.json).toMatchObject({ allowedHosts: null, members: 'none' });
    expect((await list(memberSession)).json.items[0]).toMatchObject({ name: 'CRM', allowedHosts: null, members: 'none' });
    for (const bad of [
      { name: 'X1', value: 'v', allowedHosts: [] },
      { name: 'X2', value: 'v', allowedHosts: ['https://api.example'] },
      { name: 'X3', value: 'v', allowedHosts: ['a.*.example'] },
      { name: 'X4', value: 'v', members: 'some' },
    ])
      expectProblem(await create(adminSession, bad), 400, 'VALIDATION_FAILED');
    expectProblem(await update(adminSession, 'CRM', {}), 400, 'VALIDATION_FAILED');
    expectProblem(await update(adminSession, 'CRM', { allowedHosts: ['ok.example'], members: 'all' }), 400, 'VALIDATION_FAILED');
    expect((await list(adminSession)).json.items.map((s: { name: string }) => s.name)).toEqual(['CRM']);
  });

  it('refuses at save a literal URL to a host the secret is not bound to (400 with the path), and accepts its own hosts', async () => {
    const { adminSession } = await givenAdmins();
    await create(adminSession, { name: 'CRM', value: value('crm'), allowedHosts: ['api.crm.example', '*.hooks.example'] });
    const refused = await saveWorkflow(adminSession, callWith('CRM', 'https://attacker.example/collect'));
    expectProblem(refused, 400, 'SECRET_NOT_ALLOWED');
    expect(refused.json.errors).toEqual([{ path: 'definition.steps.0.url', message: expect.stringContaining('attacker.example') }]);
    // The wildcard is for subdomains only.
    expectProblem(await saveWorkflow(adminSession, callWith('CRM', 'https://hooks.example/x')), 400, 'SECRET_NOT_ALLOWED');
    expect((await saveWorkflow(adminSession, callWith('CRM'))).status).toBe(201);
    expect((await saveWorkflow(adminSession, callWith('CRM', 'https://a.b.hooks.example/x'))).status).toBe(201);
  });

  it('lets a member save a definition that references a secret only where the secret says members: use (403 otherwise); admins always', async () => {
    const { account, member, adminSession, memberSession } = await givenAdmins();
    await create(adminSession, { name: 'ADMIN_ONLY', value: value('a') });
    await create(adminSession, { name: 'SHARED', value: value('s'), members: 'use' });
    const refused = await saveWorkflow(memberSession, callWith('ADMIN_ONLY'));
    expectProblem(refused, 403, 'SECRET_NOT_ALLOWED');
    expect(refused.json.detail).toContain('ADMIN_ONLY');
    // In a notification's signing secret too.
    const notified = await saveWorkflow(memberSession, {
      steps: [{ id: 's', type: 'set', values: { a: 1 } }],
      notifications: [{ url: 'https://hooks.example/a', events: ['execution.failed'], secret: '{% $secrets.ADMIN_ONLY %}' }],
    });
    expectProblem(notified, 403, 'SECRET_NOT_ALLOWED');
    expect((await saveWorkflow(memberSession, callWith('SHARED'))).status).toBe(201);
    const mine = await saveWorkflow(adminSession, callWith('ADMIN_ONLY'), [member.userId]);
    expect(mine.status).toBe(201);
    // A member editing the admin's definition cannot save it while it uses the admin-only secret.
    const edit = await invoke(
      updateWorkflowHandler,
      apiEvent({
        method: 'PUT',
        path: `/api/workflows/${mine.json.id}`,
        params: { id: mine.json.id },
        headers: bearer(memberSession),
        body: { definition: callWith('ADMIN_ONLY', 'https://api.crm.example/other') },
      }),
    );
    expectProblem(edit, 403, 'SECRET_NOT_ALLOWED');

    // A secret stored before the fields existed acts as members: use, with no host binding.
    await create(adminSession, { name: 'LEGACY', value: value('l') });
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { PK: `SECRET#${account.accountId}`, SK: 'SECRET#LEGACY' },
        UpdateExpression: 'REMOVE #m, allowedHosts',
        ExpressionAttributeNames: { '#m': 'members' },
      }),
    );
    expect((await list(adminSession)).json.items.find((s: { name: string }) => s.name === 'LEGACY')).toMatchObject({
      members: 'use',
      allowedHosts: null,
    });
    expect((await saveWorkflow(memberSession, callWith('LEGACY', 'https://anywhere.example/x'))).status).toBe(201);
  });
});
