// GET /api/channels
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { listChannels } from '../../../shared/domain/channels.ts';

export const handler = http(route, async ({ principal }) => ok(await listChannels(principal)));
