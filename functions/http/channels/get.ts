// GET /api/channels/{channelId}
import { route } from './get.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { showChannel } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal, params }) => ok(await showChannel(principal, params.channelId)));
