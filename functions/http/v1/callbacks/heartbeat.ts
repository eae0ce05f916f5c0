// POST /api/v1/callbacks/{callbackId}/heartbeat
import { route } from './heartbeat.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { heartbeatCallback } from '../../../../shared/domain/callbacks.ts';

export const handler = http(route, async ({ principal }) => ok(await heartbeatCallback(principal.callback)));
