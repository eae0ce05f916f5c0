// POST /api/channels (admins)
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createChannel } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal, body }) => {
  const channel = await createChannel(principal, body);
  return created(channel, `/api/channels/${channel.id}`);
});
