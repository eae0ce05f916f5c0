// POST /console/keys/{id}/revoke: the confirmed revocation (the API refuses the key from now on), then
// back to the list it came from.
import { route } from './revoke.route.ts';
import { consoleHttp } from '../../../../../shared/console/console-http.tsx';
import { seeOther } from '../../../../../shared/console/render.tsx';
import { revokeKey } from '../../../../../shared/domain/keys.ts';

export const handler = consoleHttp(route, async ({ session, params, form }) => {
  await revokeKey(session.principal, params.id);
  return seeOther(form.get('all') === '1' ? '/console/keys?all=1' : '/console/keys');
});
