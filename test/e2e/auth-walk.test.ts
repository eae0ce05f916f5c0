import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { db, tableName } from '../../shared/clients.ts';
import type { Route } from '../../shared/http/route.ts';
import { mintToken, parseToken } from '../../shared/tokens.ts';
import { givenAccount } from '../support/fixtures.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Every route of the route table that authenticates, over HTTP through the local server, with IAM
 * enforced as on AWS (infra/local/iam.ts): a missing, invalid or expired credential is a 401 (API) or
 * the sign-in redirect (console), never a 500. A failed authentication updates the per-address
 * failure counter, a write the read-only routes' roles once lacked (every such request was a 500 on AWS).
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let expired: string;
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('auth-walk'));
  const account = await givenAccount();
  expired = await sessionOf(account.member.email);
  // The session's end moved into the past (as if 12 hours went by).
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: { PK: `SESSION#${parseToken(expired, 'dys')!.id}`, SK: 'SESSION' },
      UpdateExpression: 'SET expiresAt = :past',
      ExpressionAttributeValues: { ':past': Date.now() - 1000 },
    }),
  );
});
afterAll(() => stack?.stop());

/** A path of the route with every parameter a well-formed id of nothing. */
const pathOf = (r: Route) => r.path.replace(/\{[^}]+\}/g, '01jzzzzzzzzzzzzzzzzzzzzzzz');
const authenticating = (kind: Route['auth']['kind']) => (routes as readonly Route[]).filter((r) => r.auth.kind === kind);

type Credential = { name: string; headers: (r: Route) => Record<string, string> };
const sessions: Credential[] = [
  { name: 'no session', headers: () => ({}) },
  { name: 'an invalid session', headers: () => ({ authorization: `Bearer ${mintToken('dys', '01jzzzzzzzzzzzzzzzzzzzzzzz')}` }) },
  { name: 'an expired session', headers: () => ({ authorization: `Bearer ${expired}` }) },
];
const cookies: Credential[] = [
  { name: 'no cookie', headers: () => ({}) },
  { name: 'an invalid session cookie', headers: () => ({ cookie: `flowgate_session=${mintToken('dys', '01jzzzzzzzzzzzzzzzzzzzzzzz')}` }) },
  { name: 'an expired session cookie', headers: () => ({ cookie: `flowgate_session=${expired}` }) },
];
const keys: Credential[] = [
  { name: 'no key', headers: () => ({}) },
  { name: 'an invalid key', headers: () => ({ authorization: `Bearer ${mintToken('dyk', '01jzzzzzzzzzzzzzzzzzzzzzzz')}` }) },
];

async function request(r: Route, headers: Record<string, string>) {
  const form = r.auth.kind === 'console' && r.method === 'POST';
  const res = await fetch(`${stack.url}${pathOf(r)}`, {
    method: r.method,
    redirect: 'manual',
    headers: {
      ...(r.method === 'POST' || r.method === 'PUT'
        ? { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' }
        : {}),
      ...(form ? { origin: stack.url, 'sec-fetch-site': 'same-origin' } : {}),
      ...headers,
    },
    body: r.method === 'POST' || r.method === 'PUT' ? (form ? 'a=1' : '{}') : undefined,
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

describe('every authenticating route refuses a missing, invalid or expired credential, under IAM', () => {
  it.each(authenticating('session').flatMap((r) => sessions.map((c) => [`${r.method} ${r.path}`, c.name, r, c] as const)))(
    '%s with %s: 401',
    async (_, __, r, c) => {
      const res = await request(r, c.headers(r));
      expect(res.status, res.text).toBe(401);
      expect(JSON.parse(res.text)).toMatchObject({ status: 401 });
    },
  );

  it.each(authenticating('console').flatMap((r) => cookies.map((c) => [`${r.method} ${r.path}`, c.name, r, c] as const)))(
    '%s with %s: the sign-in page',
    async (_, __, r, c) => {
      const res = await request(r, c.headers(r));
      expect([302, 303], res.text).toContain(res.status);
      expect(res.location).toMatch(/^\/console\/login/);
    },
  );

  // The API-key routes, and the console routes a program may read with a key too (`keyScope`).
  const keyed = [...authenticating('apiKey'), ...authenticating('session').filter((r) => r.auth.kind === 'session' && r.auth.keyScope)];
  it.each(keyed.flatMap((r) => keys.map((c) => [`${r.method} ${r.path}`, c.name, r, c] as const)))(
    '%s with %s: 401',
    async (_, __, r, c) => {
      const res = await request(r, c.headers(r));
      expect(r.html ? res.status : JSON.parse(res.text).status, res.text).toBe(401);
    },
  );

  it.each(authenticating('callback').map((r) => [`${r.method} ${r.path}`, r] as const))('%s with an invalid token: 401', async (_, r) => {
    const res = await request(r, { authorization: 'Bearer not-a-token' });
    expect(res.status, res.text).toBe(401);
  });

  it('walks every route that authenticates but the webhook triggers (their own gates: test/e2e/webhook-trigger.test.ts)', () => {
    const walked = ['session', 'console', 'apiKey', 'callback'] as const;
    const rest = (routes as readonly Route[]).filter((r) => r.auth.kind !== 'none' && !walked.includes(r.auth.kind as never));
    expect(rest.every((r) => r.auth.kind === 'webhook')).toBe(true);
    expect(walked.flatMap(authenticating).length).toBeGreaterThan(100);
  });
});
