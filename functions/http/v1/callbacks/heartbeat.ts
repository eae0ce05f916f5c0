// POST /api/v1/callbacks/{callbackId}/heartbeat
import { route } from './heartbeat.route.ts';
import { callbackHttp } from '../../../../shared/http/callback-handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { heartbeatCallback } from '../../../../shared/domain/callbacks.ts';

export const handler = callbackHttp(route, async ({ principal }) => ok(await heartbeatCallback(principal.callback)));
