// GET /console/secrets: every member reads the list; admins get its actions.
import { route } from './list.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { secretsWithUse } from '../../../../../shared/domain/secret-console.ts';
import { secretsPage } from './list-view.tsx';

export const handler = consoleHttp(route, async ({ session }) => {
  const { items, scannedAll } = await secretsWithUse(session.principal);
  return secretsPage(session, items, scannedAll);
});
