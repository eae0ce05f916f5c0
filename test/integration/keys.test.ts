import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { handler as createKeyHandler } from '../../functions/http/keys/create.ts';
import { handler as listKeysHandler } from '../../functions/http/keys/list.ts';
import { handler as revokeHandler } from '../../functions/http/keys/revoke.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { db, tableName } from '../../shared/clients.ts';
import { recordKeyUsage } from '../../shared/db/entities/api-key.ts';
import { authenticateKey, createKey } from '../../shared/domain/keys.ts';
import { hashToken } from '../../shared/tokens.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

const DAY = 86_400_000;
const list = async (session: string, all = false) =>
  (await invoke(listKeysHandler, apiEvent({ path: '/api/keys', headers: bearer(session), query: all ? { all: 'true' } : undefined }))).json;
const create = (session: string, body: unknown) =>
  invoke(createKeyHandler, apiEvent({ method: 'POST', path: '/api/keys', headers: bearer(session), body: body as object }));
const revoke = (session: string, id: string) =>
  invoke(revokeHandler, apiEvent({ method: 'DELETE', path: `/api/keys/${id}`, headers: bearer(session), params: { id } }));
const callV1 = (token: string) => invoke(v1Me, apiEvent({ path: '/api/v1/me', headers: bearer(token) }));

describe('API keys', () => {
  it('shows the token once and stores only its hash', async () => {
    const { member } = await givenAccount();
    const session = await sessionOf(member.email);
    const res = await create(session, { name: 'ci', scopes: ['WORKFLOW_READ', 'WORKFLOW_READ'], validityDays: 7 });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/keys/${res.json.id}`);
    expect(res.json.token).toMatch(new RegExp(`^dyk_${res.json.id}_[0-9A-Za-z]{49}$`));
    expect(res.json.scopes).toEqual(['WORKFLOW_READ']);
    expect(res.json.expiresAt - res.json.createdAt).toBe(7 * DAY);

    const listed = await list(session);
    const body = JSON.stringify(listed);
    expect(listed.items.map((k: { id: string }) => k.id)).toContain(res.json.id);
    expect(body).not.toContain(res.json.token.split('_')[2]);
    expect(body).not.toContain('tokenHash');
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `KEY#${res.json.id}`, SK: 'KEY' } }));
    expect(Item?.tokenHash).toBe(hashToken(res.json.token));
    expect(JSON.stringify(Item)).not.toContain(res.json.token);
  });

  it('rejects unknown scopes, validity outside 1..365 days and bad types, writing nothing', async () => {
    const { member } = await givenAccount();
    const session = await sessionOf(member.email);
    const before = (await list(session)).items.length;
    for (const [body, path] of [
      [{ name: 'x', scopes: ['ADMIN'], validityDays: 30 }, 'scopes.0'],
      [{ name: 'x', scopes: ['WORKFLOW_READ'], validityDays: 0 }, 'validityDays'],
      [{ name: 'x', scopes: ['WORKFLOW_READ'], validityDays: 366 }, 'validityDays'],
      [{ name: 'x', scopes: ['WORKFLOW_READ'], validityDays: 1.5 }, 'validityDays'],
      [{ name: 'x', scopes: [], validityDays: 30 }, 'scopes'],
      [{ name: '', scopes: ['WORKFLOW_READ'], validityDays: 30 }, 'name'],
      [{ name: 'x', scopes: 'WORKFLOW_READ', validityDays: '30' }, 'scopes'],
    ] as const) {
      const res = await create(session, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('VALIDATION_FAILED');
      expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    const textBody = await invoke(
      createKeyHandler,
      apiEvent({ method: 'POST', path: '/api/keys', headers: { ...bearer(session), 'content-type': 'text/plain' }, body: '{}' }),
    );
    expect(textBody.status).toBe(415);
    expect((await list(session)).items.length).toBe(before);
  });

  it('revocation (owner or admin) makes the next request 401', async () => {
    const { admin, member, memberKey, adminKey } = await givenAccount();
    const memberSession = await sessionOf(member.email);
    const adminSession = await sessionOf(admin.email);
    expect((await callV1(memberKey.token)).status).toBe(200);

    expect((await revoke(memberSession, adminKey.id)).status).toBe(403);
    expect((await callV1(adminKey.token)).status).toBe(200);

    expect((await revoke(adminSession, memberKey.id)).status).toBe(204);
    const after = await callV1(memberKey.token);
    expect(after.status).toBe(401);
    expect(after.json.code).toBe('INVALID_API_KEY');
    const listed = await list(memberSession);
    expect(listed.items.find((k: { id: string }) => k.id === memberKey.id)).toMatchObject({ status: 'revoked' });
  });

  it("answers 404 for another account's key, unknown ids and malformed ids", async () => {
    const a = await givenAccount();
    const b = await givenAccount();
    const session = await sessionOf(a.admin.email);
    const other = await revoke(session, b.adminKey.id);
    expect(other.status).toBe(404);
    expect((await callV1(b.adminKey.token)).status).toBe(200);
    expect((await revoke(session, '01jzzzzzzzzzzzzzzzzzzzzzzz')).status).toBe(404);
    expect((await revoke(session, '../etc')).status).toBe(404);
  });

  it('members list their own keys; only admins may list all', async () => {
    const { admin, member, adminKey, memberKey } = await givenAccount();
    const memberSession = await sessionOf(member.email);
    const adminSession = await sessionOf(admin.email);
    expect((await list(memberSession)).items.map((k: { id: string }) => k.id)).toEqual([memberKey.id]);
    expect((await list(adminSession)).items.map((k: { id: string }) => k.id)).toEqual([adminKey.id]);
    expect((await list(adminSession, true)).items.map((k: { id: string }) => k.id).sort()).toEqual([adminKey.id, memberKey.id].sort());
    const denied = await invoke(listKeysHandler, apiEvent({ path: '/api/keys', headers: bearer(memberSession), query: { all: 'true' } }));
    expect(denied.status).toBe(403);
  });

  it('accumulates usage per key: total, today and last use, with a new count each UTC day', async () => {
    const { member, memberKey, adminKey } = await givenAccount();
    const session = await sessionOf(member.email);
    for (let i = 0; i < 3; i++) expect((await callV1(memberKey.token)).status).toBe(200);
    const mine = (await list(session)).items.find((k: { id: string }) => k.id === memberKey.id);
    expect(mine.usage).toMatchObject({ total: 3, today: 3 });
    expect(mine.usage.lastUsedAt).toBeGreaterThan(Date.now() - 60_000);

    const tomorrow = Date.now() + DAY;
    await Promise.all([recordKeyUsage(adminKey.id, tomorrow), recordKeyUsage(adminKey.id, tomorrow)]);
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `KEY#${adminKey.id}`, SK: 'KEY' } }));
    expect(Item).toMatchObject({ usageTotal: 2, usageToday: 2, usageDay: new Date(tomorrow).toISOString().slice(0, 10) });
    // A count of an earlier day written late (another instance's flush) adds to the total only.
    expect(await recordKeyUsage(adminKey.id, Date.now())).toBe(true);
    const later = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `KEY#${adminKey.id}`, SK: 'KEY' } }));
    expect(later.Item).toMatchObject({ usageTotal: 3, usageToday: 2, usageDay: new Date(tomorrow).toISOString().slice(0, 10) });
  });

  it('expired keys are refused', async () => {
    const { member } = await givenAccount();
    const key = await createKey(
      { accountId: member.accountId, userId: member.userId },
      { name: 'short', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    );
    await expect(authenticateKey(key.token, Date.now() + 2 * DAY)).rejects.toMatchObject({ kind: 'unauthorized', code: 'INVALID_API_KEY' });
    await expect(authenticateKey(key.token)).resolves.toMatchObject({ keyId: key.id });
  });
});
