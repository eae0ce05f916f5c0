// DELETE /api/webhooks/{id}
import { route } from './delete.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { deleteWebhook } from '../../../shared/domain/webhooks.ts';

export const handler = http(route, async ({ principal, params }) => {
  await deleteWebhook(principal, params.id);
  return noContent();
});
