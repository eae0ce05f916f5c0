// PUT /api/channels/{channelId} (admins)
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateChannel } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal, params, body }) => ok(await updateChannel(principal, params.channelId, body)));
