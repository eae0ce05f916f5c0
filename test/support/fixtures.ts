import { randomBytes } from 'node:crypto';
import type { Plan } from '../../shared/config.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { createAccount, createUser } from '../../shared/domain/accounts.ts';
import { ALL_SCOPES, createKey } from '../../shared/domain/keys.ts';

export const uniqueEmail = (tag = 'user') => `${tag}-${randomBytes(6).toString('hex')}@test.local`;
export const PASSWORD = 'correct horse battery';

/** A webhook's create input, open on purpose (`authMode: "open"`) when it names neither a bound key nor a secret. */
export const openUnlessKeyed = (input: Record<string, unknown>) =>
  input.apiKeyId !== undefined || input.secretKey !== undefined ? input : { authMode: 'open', ...input };

/** A fresh account with an admin, a member and a key for each (given scopes), all unique per call. */
export async function givenAccount(opts: { plan?: Plan; scopes?: readonly Scope[] } = {}) {
  const { account, admin } = await createAccount({
    name: 'Test',
    plan: opts.plan ?? 'team',
    email: uniqueEmail('admin'),
    password: PASSWORD,
  });
  const member = await createUser(account.accountId, uniqueEmail('member'), PASSWORD, 'member');
  const scopes = opts.scopes ?? ALL_SCOPES;
  const adminKey = await createKey({ accountId: account.accountId, userId: admin.userId }, { name: 'admin key', scopes, validityDays: 30 });
  const memberKey = await createKey(
    { accountId: account.accountId, userId: member.userId },
    { name: 'member key', scopes, validityDays: 30 },
  );
  return { account, admin, member, adminKey, memberKey };
}

/** The account's admin as a console session principal (what the domain functions take from a signed-in admin). */
export const adminSession = (a: Awaited<ReturnType<typeof givenAccount>>) => ({
  kind: 'session' as const,
  accountId: a.account.accountId,
  userId: a.admin.userId,
  role: 'admin' as const,
  sessionId: 's',
});
