import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../shared/domain/accounts.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { bearer, readResponse } from '../support/http.ts';

/**
 * Membership changes racing the member's own key creation and each other, over real HTTP on the local
 * server (handlers running concurrently against DynamoDB Local): whatever the interleaving, no key or
 * session of a removed or disabled member works afterwards, and after a re-enable only the keys the
 * admin restored work again, old sessions never.
 */
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('races'));
});
afterAll(() => stack?.stop());

const call = async (method: string, path: string, token: string, json?: unknown) =>
  readResponse(
    await fetch(`${stack.url}${path}`, {
      method,
      headers: { ...bearer(token), ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: json !== undefined ? JSON.stringify(json) : undefined,
    }),
  );
const login = async (email: string) => {
  const res = await readResponse(
    await fetch(`${stack.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );
  expect(res.status, res.text).toBe(200);
  return res.json.token as string;
};
const newKey = (session: string, name: string) => call('POST', '/api/keys', session, { name, scopes: ['WORKFLOW_READ'], validityDays: 1 });
/** 200 when the key still works on a v1 route, else its status. */
const keyWorks = async (token: string) => (await call('GET', '/api/v1/me', token)).status;
const sessionWorks = async (token: string) => (await call('GET', '/api/auth/me', token)).status;

// Twenty rounds of concurrent writes to one user item: with DynamoDB's transaction conflicts (which
// the local stack raises, infra/local/conflicts.ts) each round waits out a few retries.
describe('key creation racing the owner’s removal', { timeout: 90_000 }, () => {
  it('20 races: no key created around a removal works afterwards, nor the removed member’s session', async () => {
    const { admin, account } = await givenAccount();
    const adminSession = await login(admin.email);
    let created = 0;
    for (let i = 0; i < 20; i++) {
      const member = await createUser(account.accountId, uniqueEmail('racer'), PASSWORD, 'member');
      const session = await login(member.email);
      const [k1, k2, removed, k3] = await Promise.all([
        newKey(session, 'a'),
        newKey(session, 'b'),
        call('DELETE', `/api/members/${member.userId}`, adminSession),
        newKey(session, 'c'),
      ]);
      expect(removed.status, removed.text).toBe(204);
      for (const k of [k1, k2, k3]) {
        expect([201, 401], k.text).toContain(k.status);
        if (k.status !== 201) continue;
        created++;
        expect(await keyWorks(k.json.token), `race ${i}: key ${k.json.id} of a removed member`).toBe(401);
      }
      expect(await sessionWorks(session)).toBe(401);
      const keys = await call('GET', '/api/keys?all=true', adminSession);
      const theirs = keys.json.items.filter((k: { ownerId: string }) => k.ownerId === member.userId);
      expect(theirs.filter((k: { status: string }) => k.status === 'active')).toEqual([]);
    }
    // Some creations must have won their race, or the test proved nothing.
    expect(created).toBeGreaterThan(0);
  });

  it('20 races with a disable: no key or session of the disabled member works', async () => {
    const { admin, account } = await givenAccount();
    const adminSession = await login(admin.email);
    for (let i = 0; i < 20; i++) {
      const member = await createUser(account.accountId, uniqueEmail('racer'), PASSWORD, 'member');
      const session = await login(member.email);
      const [k1, disabled, k2] = await Promise.all([
        newKey(session, 'a'),
        call('PUT', `/api/members/${member.userId}`, adminSession, { disabled: true }),
        newKey(session, 'b'),
      ]);
      expect(disabled.status, disabled.text).toBe(200);
      for (const k of [k1, k2]) if (k.status === 201) expect(await keyWorks(k.json.token), `race ${i}`).toBe(401);
      expect(await sessionWorks(session)).toBe(401);
    }
  });
});

describe('disable racing enable', { timeout: 90_000 }, () => {
  it('20 races end in one consistent state: user, keys and sessions agree', async () => {
    const { admin, account } = await givenAccount();
    const adminSession = await login(admin.email);
    const outcomes = new Set<boolean>();
    for (let i = 0; i < 20; i++) {
      const member = await createUser(account.accountId, uniqueEmail('racer'), PASSWORD, 'member');
      const session = await login(member.email);
      const key = await newKey(session, 'k');
      expect(key.status).toBe(201);
      const path = `/api/members/${member.userId}`;
      const [off, on] = await Promise.all([
        call('PUT', path, adminSession, { disabled: true }),
        call('PUT', path, adminSession, { disabled: false, restoreKeys: true }),
      ]);
      expect(off.status, off.text).toBe(200);
      expect(on.status, on.text).toBe(200);
      const members = await call('GET', '/api/members', adminSession);
      const state = members.json.items.find((u: { id: string }) => u.id === member.userId);
      outcomes.add(state.disabled);
      // The disable happened (whatever came after): the session from before it is over for good.
      expect(await sessionWorks(session), `race ${i}`).toBe(401);
      expect(await keyWorks(key.json.token), `race ${i}: disabled=${state.disabled}`).toBe(state.disabled ? 401 : 200);
      const keys = await call('GET', '/api/keys?all=true', adminSession);
      const status = keys.json.items.find((k: { id: string }) => k.id === key.json.id).status;
      expect(status).toBe(state.disabled ? 'suspended' : 'active');
      if (!state.disabled) expect(await sessionWorks(await login(member.email))).toBe(200);
    }
    expect(outcomes.size).toBeGreaterThan(0);
  });

  it('re-enabling without restoreKeys leaves the keys suspended and the old sessions dead; restoreKeys brings the keys back', async () => {
    const { admin, member, memberKey } = await givenAccount();
    const adminSession = await login(admin.email);
    const session = await login(member.email);
    const path = `/api/members/${member.userId}`;
    expect((await call('PUT', path, adminSession, { disabled: true })).status).toBe(200);
    expect((await call('PUT', path, adminSession, { disabled: false })).json).toMatchObject({ disabled: false });
    expect(await sessionWorks(session)).toBe(401);
    expect(await keyWorks(memberKey.token)).toBe(401);
    const listed = await call('GET', '/api/keys?all=true', adminSession);
    expect(listed.json.items.find((k: { id: string }) => k.id === memberKey.id).status).toBe('suspended');
    expect((await call('PUT', path, adminSession, { disabled: false, restoreKeys: true })).status).toBe(200);
    expect(await keyWorks(memberKey.token)).toBe(200);
    expect(await sessionWorks(session)).toBe(401);
    expect(await sessionWorks(await login(member.email))).toBe(200);
    const refused = await call('PUT', path, adminSession, { disabled: true, restoreKeys: true });
    expect(refused.status).toBe(400);
  });
});
