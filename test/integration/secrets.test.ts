import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/secrets/create.ts';
import { handler as deleteHandler } from '../../functions/http/secrets/delete.ts';
import { handler as listHandler } from '../../functions/http/secrets/list.ts';
import { handler as updateHandler } from '../../functions/http/secrets/update.ts';
import { db, tableName } from '../../shared/clients.ts';
import { clearSecretCache, readSecrets } from '../../shared/domain/account-secrets.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
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
    expect(created.json).toEqual({ name: 'API_TOKEN', createdAt: expect.any(Number), updatedAt: created.json.createdAt, lastUsedAt: null });
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
        { name: 'API_TOKEN', createdAt: expect.any(Number), updatedAt: expect.any(Number), lastUsedAt: null },
        { name: 'B_SECOND', createdAt: expect.any(Number), updatedAt: expect.any(Number), lastUsedAt: null },
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
