// GET /console/keys: my API keys (admins with ?all=1: the account's, with their owners), and "Create key".
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { listKeys } from '../../../../../shared/domain/keys.ts';
import { listMembers } from '../../../../../shared/domain/members.ts';
import { keysPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session, query }) => {
  const all = query.all === '1' || query.all === 'true';
  const [keys, members] = await Promise.all([
    listKeys(session.principal, all),
    all ? listMembers(session.principal) : { items: [] as { id: string; email: string }[] },
  ]);
  return keysPage(session, keys.items, all, new Map(members.items.map((m) => [m.id, m.email])));
});
