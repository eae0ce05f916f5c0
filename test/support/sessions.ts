import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { handler as login } from '../../functions/http/auth/login.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { givenAccount, PASSWORD } from './fixtures.ts';
import { apiEvent, invoke } from './http.ts';

/**
 * A source address no other login uses: logins are rate-limited per address, and the limit is shared
 * by every test file.
 */
export const freshIp = () => `198.18.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/** A console session token, by logging in through the login handler from a fresh address. */
export async function sessionOf(email: string, password = PASSWORD): Promise<string> {
  const res = await invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp: freshIp() }));
  expect(res.status, res.body).toBe(200);
  return res.json.token as string;
}

type KeySpec = { user: 'admin' | 'member'; scopes: readonly Scope[] };

/**
 * The no-5xx property suites' setup: an account (admin, member, a key each) with sessions for its admin
 * and member, another account, and the extra keys asked for (by name, each of the given user and scopes).
 */
export async function givenPropertyAccounts<K extends string>(keys: Record<K, KeySpec>) {
  const [account, other] = await Promise.all([givenAccount(), givenAccount()]);
  const [adminSession, memberSession] = await Promise.all([sessionOf(account.admin.email), sessionOf(account.member.email)]);
  const names = Object.keys(keys) as K[];
  const created = await Promise.all(
    names.map((name) => {
      const { user, scopes } = keys[name];
      const owner = account[user];
      return createKey({ accountId: owner.accountId, userId: owner.userId }, { name, scopes, validityDays: 1 });
    }),
  );
  const extraKeys = Object.fromEntries(names.map((n, i) => [n, created[i]])) as Record<K, (typeof created)[number]>;
  return { account, other, adminSession, memberSession, keys: extraKeys };
}
