// DELETE /api/channels/{channelId} (admins)
import { route } from './delete.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { noContent } from '../../../shared/http/responses.ts';
import { removeChannel } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal, params }) => {
  await removeChannel(principal, params.channelId);
  return noContent();
});
