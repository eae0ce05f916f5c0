// GET /console/keys/{id}/revoke: "Revoke key 'name'?" (the owner's key, or any of the account's for an
// admin; another account's answers 404 like an unknown one).
import { route } from './revoke-confirm.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { keyFor } from '../../../../../shared/domain/keys.ts';
import { revokeConfirmPage } from './revoke-view.tsx';

export const handler = consoleHttp(route, async ({ session, params }) =>
  revokeConfirmPage(session, await keyFor(session.principal, params.id)),
);
