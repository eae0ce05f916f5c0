import { describe, expect, it } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import { LOGIN_LIMITS, login as loginAt } from '../../shared/domain/sessions.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, expectProblem, invoke } from '../support/http.ts';

// Issue 41, finding 8: sign-in limits per account across addresses (without keeping the owner out
// where they signed in before), IPv6 counted per /64, and sliding windows (no second budget right
// after a window's boundary).

const loginFrom = (email: string, password: string, sourceIp: string) =>
  invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp }));
const seq = (n: number) => Array.from({ length: n }, (_, i) => i);
/** A /24 (or /48 for IPv6) no other test uses. */
const octet = () => 1 + Math.floor(Math.random() * 250);

describe('the per-account sign-in limit', () => {
  it('checks at most perAccount wrong passwords per window from addresses that never signed in; the owner’s own address still works', async () => {
    const { admin } = await givenAccount();
    const net = `198.19.${octet()}`;
    const home = `${net}.250`;
    expect((await loginFrom(admin.email, PASSWORD, home)).status).toBe(200);
    // 5 addresses, each within its own per-address limits: 50 guesses in all.
    const addresses = seq(5).map((i) => `${net}.${10 + i}`);
    const results = await Promise.all(
      addresses.flatMap((ip) => seq(LOGIN_LIMITS.perEmailAndIp).map((i) => loginFrom(admin.email, `wrong password ${i}`, ip))),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.perAccount);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50 - LOGIN_LIMITS.perAccount);
    // A new address waits, even with the right password: a delay (Retry-After), not a block until someone acts.
    const stranger = await loginFrom(admin.email, PASSWORD, `${net}.99`);
    expectProblem(stranger, 429, 'RATE_LIMITED');
    const wait = Number(stranger.headers['retry-after']);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(2 * LOGIN_LIMITS.accountWindowSeconds);
    // Where the owner signed in before, they sign in; and a wrong password there is still only checked, not locked.
    expect((await loginFrom(admin.email, 'one typo here', home)).status).toBe(401);
    expect((await loginFrom(admin.email, PASSWORD, home)).status).toBe(200);
  });
});

describe('IPv6 addresses', () => {
  it('are counted per /64: a new address in the same /64 is the same client', async () => {
    const { admin } = await givenAccount();
    const prefix = `2001:db8:${octet().toString(16)}:${octet().toString(16)}`;
    for (const i of seq(LOGIN_LIMITS.perEmailAndIp))
      expect((await loginFrom(admin.email, 'wrong password!', `${prefix}::${(i + 1).toString(16)}`)).status).toBe(401);
    const sameNet = await loginFrom(admin.email, PASSWORD, `${prefix}:ffff:1:2:3`);
    expectProblem(sameNet, 429, 'RATE_LIMITED');
    // Another /64 is another client.
    expect((await loginFrom(admin.email, PASSWORD, `${prefix.replace(/:[0-9a-f]+$/, ':ffff')}::1`)).status).toBe(200);
  });

  it('spraying emails from many addresses of one /64 meets the per-address limit', async () => {
    const prefix = `2001:db8:${octet().toString(16)}:beef`;
    const statuses: number[] = [];
    for (const i of seq(LOGIN_LIMITS.perIp + 2))
      statuses.push((await loginFrom(uniqueEmail('spray'), 'whatever pw', `${prefix}:${i.toString(16)}::1`)).status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LOGIN_LIMITS.perIp);
    expect(statuses.slice(-2)).toEqual([429, 429]);
  });
});

describe('two-window limits', () => {
  it('a full budget of failures just before a window’s boundary leaves none just after it', async () => {
    const { admin } = await givenAccount();
    const ip = `198.19.${octet()}.7`;
    const w = LOGIN_LIMITS.windowSeconds * 1000;
    const boundary = (Math.floor(Date.now() / w) + 1) * w;
    for (const i of seq(LOGIN_LIMITS.perEmailAndIp))
      await expect(loginAt(admin.email, `wrong ${i}`, ip, boundary - 2000 + i)).rejects.toMatchObject({ code: 'INVALID_CREDENTIALS' });
    // Fixed windows would admit another full budget here.
    const after = loginAt(admin.email, PASSWORD, ip, boundary + 2000);
    await expect(after).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    const refusal = (await after.catch((e: unknown) => e)) as { extra: { headers: Record<string, string> } };
    const retry = Number(refusal.extra.headers['retry-after']);
    expect(retry).toBe(LOGIN_LIMITS.windowSeconds - 2);
    // Still none just before the next boundary (no span of a window's length holds more than the limit) ...
    await expect(loginAt(admin.email, PASSWORD, ip, boundary + w - 1000)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    // ... and room again after it.
    await expect(loginAt(admin.email, PASSWORD, ip, boundary + w + 1000)).resolves.toMatchObject({ user: { id: admin.userId } });
  });
});
