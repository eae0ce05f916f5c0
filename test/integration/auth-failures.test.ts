import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as me } from '../../functions/http/auth/me.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { resetConfig } from '../../shared/config.ts';
import { resetAuthFailureMemo } from '../../shared/domain/auth-failures.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';

const LIMIT = 5;
beforeAll(() => {
  process.env.AUTH_FAILURE_LIMIT = String(LIMIT);
  resetConfig();
});
// The budget is per fixed minute: start each test well inside one, so its failures all fall in it.
beforeEach(async () => {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
}, 20_000);

let n = 0;
const freshIp = () => `2001:db8:${process.pid.toString(16)}:${Date.now().toString(16).slice(-4)}::${(++n).toString(16)}`;
const keyCall = (sourceIp: string, headers: Record<string, string> = {}) =>
  invoke(v1Me, apiEvent({ path: '/api/v1/me', headers, sourceIp }));
const sessionCall = (sourceIp: string, headers: Record<string, string> = {}) =>
  invoke(me, apiEvent({ path: '/api/auth/me', headers, sourceIp }));
const loginFrom = (sourceIp: string, email: string, password: string) =>
  invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp }));
const badKey = 'dyk_01jzzzzzzzzzzzzzzzzzzzzzzz_0000000000000000000000000000000000000000000000000';

describe('the failed-authentication budget per source address', () => {
  it('answers 429 with Retry-After past AUTH_FAILURE_LIMIT failures, and never refuses a valid key or session', async () => {
    const { admin, adminKey } = await givenAccount();
    const session = (await loginFrom(freshIp(), admin.email, PASSWORD)).json.token;
    const ip = freshIp();
    for (let i = 0; i < LIMIT; i++) expect((await keyCall(ip, bearer(badKey))).status).toBe(401);
    const limited = await keyCall(ip, bearer(badKey));
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('RATE_LIMITED');
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Missing credentials and bad sessions from the same address are refused too.
    expect((await keyCall(ip)).status).toBe(429);
    expect((await sessionCall(ip, bearer('dys_nope_nope'))).status).toBe(429);
    // A valid credential from the same (shared) address is served.
    expect((await keyCall(ip, bearer(adminKey.token))).status).toBe(200);
    expect((await sessionCall(ip, bearer(session))).status).toBe(200);
    // Another address is untouched.
    expect((await keyCall(freshIp(), bearer(badKey))).status).toBe(401);
  });

  it('counts in the table, so another instance (no memory of the address) refuses it too', async () => {
    const ip = freshIp();
    await Promise.all(Array.from({ length: LIMIT }, () => sessionCall(ip)));
    resetAuthFailureMemo();
    expect((await sessionCall(ip)).status).toBe(429);
    resetAuthFailureMemo();
    expect((await keyCall(ip, { 'x-api-key': 'garbage' })).status).toBe(429);
  });

  it('counts failed logins, and refuses logins from an address over the budget', async () => {
    const { admin } = await givenAccount();
    const ip = freshIp();
    for (let i = 0; i < LIMIT; i++) expect((await keyCall(ip)).status).toBe(401);
    expect((await loginFrom(ip, admin.email, 'wrong password!')).status).toBe(429);
    const ip2 = freshIp();
    for (let i = 0; i < LIMIT; i++) expect((await loginFrom(ip2, `ghost${i}@test.local`, 'wrong password!')).status).toBe(401);
    expect((await keyCall(ip2, bearer(badKey))).status).toBe(429);
  });
});
