// GET /console/account: the plan, its limits and today's usage; my profile and "Change password".
import { route } from './account.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { renderAccount } from './account-data.ts';

export const handler = consoleHttp(route, async ({ session, query }) =>
  renderAccount(session, { saved: query.saved === 'profile' || query.saved === 'password' ? query.saved : undefined }),
);
