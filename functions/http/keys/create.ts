// POST /api/keys
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createKey } from '../../../shared/domain/keys.ts';

export const handler = http(route, async ({ principal, body }) => {
  const key = await createKey(principal, body);
  return created(key, `/api/keys/${key.id}`);
});
