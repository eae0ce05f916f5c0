// What the account page reads, for its GET and for its forms' refusals (the page again with the errors).
import type { ConsoleSession } from '../../../../../shared/console/auth.ts';
import { accountUsage } from '../../../../../shared/domain/account-usage.ts';
import { memberFor } from '../../../../../shared/domain/members.ts';
import { type AccountState, accountPage } from './account-view.tsx';

export async function renderAccount(session: ConsoleSession, state: AccountState = {}) {
  const [usage, me] = await Promise.all([accountUsage(session.principal), memberFor(session.principal, session.principal.userId)]);
  return accountPage(session, usage, me, state);
}
