// POST /api/channels/{channelId}/test (admins)
import { route } from './test.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { testChannel } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal, params, body }) => ok(await testChannel(principal, params.channelId, body.to)));
