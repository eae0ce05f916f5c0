import { describe, expect, it } from 'vitest';
import { handler as auditList } from '../../functions/http/audit/list.ts';
import { handler as logoutEverywhere } from '../../functions/http/auth/logout-everywhere.ts';
import { handler as me } from '../../functions/http/auth/me.ts';
import { handler as password } from '../../functions/http/auth/password.ts';
import { handler as accountPassword } from '../../functions/http/console/settings/account/password.ts';
import { handler as accountSignOut } from '../../functions/http/console/settings/account/sign-out.ts';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { clearSessionCookie } from '../../shared/console/cookie.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import type { AuditEntry } from '../../shared/db/entities/audit.ts';
import { PASSWORD_CHECK_LIMITS } from '../../shared/domain/session-ends.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

// Issue 41, findings 1 and 5: a password change ends every other session of the member (console
// cookies and API sessions), "sign out everywhere" ends all of them, and guessing the current
// password under "Change password" is limited (429 with Retry-After) and audited.

type Result = { statusCode: number; headers?: Record<string, string>; cookies?: string[]; body?: string };
const page = async (handler: (e: never, c: never) => Promise<unknown>, path: string, token: string, form?: Record<string, string>) => {
  const event = apiEvent({
    method: form ? 'POST' : 'GET',
    path,
    headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
    ...(form ? { body: new URLSearchParams({ csrf: csrfToken(token), ...form }).toString() } : {}),
    sourceIp: freshIp(),
  });
  event.cookies = [`flowgate_session=${token}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const consoleOpen = async (token: string) => (await page(overview, '/console', token)).statusCode === 200;
const apiOpen = async (token: string) => {
  const res = await invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(token) }));
  if (res.status !== 200) expectProblem(res, 401, 'INVALID_SESSION');
  return res.status === 200;
};
const change = (token: string, currentPassword: string, newPassword: string) =>
  invoke(
    password,
    apiEvent({ method: 'POST', path: '/api/auth/password', headers: bearer(token), body: { currentPassword, newPassword } }),
  );

async function auditOf(adminToken: string, action: string): Promise<AuditEntry[]> {
  const res = await invoke(auditList, apiEvent({ path: '/api/audit', headers: bearer(adminToken), query: { action, limit: '100' } }));
  expect(res.status, res.body).toBe(200);
  return res.json.items;
}

describe('a password change', () => {
  it('ends every other session of the member (API and console) and keeps the one that changed it; keys stay', async () => {
    const a = await givenAccount();
    const [mine, otherApi, otherBrowser, someoneElse] = await Promise.all([
      sessionOf(a.member.email),
      sessionOf(a.member.email),
      sessionOf(a.member.email),
      sessionOf(a.admin.email),
    ]);
    expect(await apiOpen(otherApi)).toBe(true);
    expect(await consoleOpen(otherBrowser)).toBe(true);
    const done = await change(mine, PASSWORD, 'a brand new password');
    expect(done.status, done.body).toBe(204);
    expect(await apiOpen(mine)).toBe(true);
    expect(await consoleOpen(mine)).toBe(true);
    expect(await apiOpen(otherApi)).toBe(false);
    const ended = await page(overview, '/console', otherBrowser);
    expect(ended.statusCode).toBe(303);
    expect(ended.headers?.location).toBe('/console/login?next=%2Fconsole');
    // Another member's sessions, and the member's API key, are not sessions of theirs.
    expect(await apiOpen(someoneElse)).toBe(true);
    const key = await invoke(v1Me, apiEvent({ path: '/api/v1/me', headers: bearer(a.memberKey.token) }));
    expect(key.status, key.body).toBe(200);
    // A sign-in after the change is a session of the new epoch.
    const again = await sessionOf(a.member.email, 'a brand new password');
    expect(await apiOpen(again)).toBe(true);
    const [entry] = await auditOf(someoneElse, 'password.changed');
    expect(entry).toMatchObject({ actor: { kind: 'user', userId: a.member.userId }, details: { otherSessionsEnded: true } });
  });

  it('from the console form ends the other sessions too, and the browser that changed it stays signed in', async () => {
    const a = await givenAccount();
    const [mine, other] = await Promise.all([sessionOf(a.member.email), sessionOf(a.member.email)]);
    const res = await page(accountPassword, '/console/account/password', mine, {
      currentPassword: PASSWORD,
      newPassword: 'console new password',
      confirmPassword: 'console new password',
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers?.location).toBe('/console/account?saved=password');
    expect(await consoleOpen(mine)).toBe(true);
    expect(await consoleOpen(other)).toBe(false);
  });
});

describe('sign out everywhere', () => {
  it('POST /api/auth/logout-everywhere ends every session of the caller, this one included, audited once', async () => {
    const a = await givenAccount();
    const [mine, other, browser, adminToken] = await Promise.all([
      sessionOf(a.member.email),
      sessionOf(a.member.email),
      sessionOf(a.member.email),
      sessionOf(a.admin.email),
    ]);
    const res = await invoke(logoutEverywhere, apiEvent({ method: 'POST', path: '/api/auth/logout-everywhere', headers: bearer(mine) }));
    expect(res.status, res.body).toBe(204);
    expect(await apiOpen(mine)).toBe(false);
    expect(await apiOpen(other)).toBe(false);
    expect(await consoleOpen(browser)).toBe(false);
    expect(await apiOpen(adminToken)).toBe(true);
    const entries = await auditOf(adminToken, 'session.signed_out_everywhere');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { kind: 'user', userId: a.member.userId }, object: { type: 'member', id: a.member.userId } });
    // Signing in again works.
    expect(await apiOpen(await sessionOf(a.member.email))).toBe(true);
  });

  it('the console action ends every session, clears the cookie and goes to the sign-in page', async () => {
    const a = await givenAccount();
    const [mine, other, adminToken] = await Promise.all([sessionOf(a.member.email), sessionOf(a.member.email), sessionOf(a.admin.email)]);
    const res = await page(accountSignOut, '/console/account/sign-out-everywhere', mine, {});
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers?.location).toBe('/console/login');
    expect(res.cookies).toEqual([clearSessionCookie()]);
    expect(await consoleOpen(mine)).toBe(false);
    expect(await apiOpen(other)).toBe(false);
    const [entry] = await auditOf(adminToken, 'session.signed_out_everywhere');
    expect(entry).toMatchObject({ channel: 'console', actor: { userId: a.member.userId } });
    // Without the session's CSRF token nothing ends.
    const again = await sessionOf(a.member.email);
    const forged = await page(accountSignOut, '/console/account/sign-out-everywhere', again, { csrf: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect(await consoleOpen(again)).toBe(true);
  });
});

describe('guessing the current password', () => {
  it('is limited per member (429 with Retry-After, even with the right password), and each wrong guess is audited', async () => {
    const a = await givenAccount();
    const [mine, adminToken] = await Promise.all([sessionOf(a.member.email), sessionOf(a.admin.email)]);
    const guesses = await Promise.all(
      Array.from({ length: PASSWORD_CHECK_LIMITS.perUser + 3 }, (_, i) => change(mine, `wrong guess ${i}!`, 'whatever new one')),
    );
    const statuses = guesses.map((g) => g.status).sort();
    expect(statuses.filter((s) => s === 400)).toHaveLength(PASSWORD_CHECK_LIMITS.perUser);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    const limited = await change(mine, PASSWORD, 'a new password 123');
    expectProblem(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The password did not change.
    expect(await apiOpen(await sessionOf(a.member.email, PASSWORD))).toBe(true);
    const failed = await auditOf(adminToken, 'password.change_failed');
    expect(failed).toHaveLength(PASSWORD_CHECK_LIMITS.perUser);
    expect(failed[0]).toMatchObject({
      actor: { kind: 'user', userId: a.member.userId },
      object: { type: 'user', id: a.member.userId },
      details: { reason: 'wrong_current_password' },
    });
  });

  it('a right guess resets the count', async () => {
    const a = await givenAccount();
    const mine = await sessionOf(a.member.email);
    for (let i = 0; i < PASSWORD_CHECK_LIMITS.perUser - 1; i++)
      expect((await change(mine, 'wrong guess!', 'whatever new one')).status).toBe(400);
    expect((await change(mine, PASSWORD, 'second password 1')).status).toBe(204);
    for (let i = 0; i < PASSWORD_CHECK_LIMITS.perUser - 1; i++)
      expect((await change(mine, 'wrong guess!', 'whatever new one')).status).toBe(400);
    expect((await change(mine, 'second password 1', 'third password 12')).status).toBe(204);
  });
});
