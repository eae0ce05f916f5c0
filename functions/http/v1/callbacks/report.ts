// POST /api/v1/callbacks/{callbackId}
import { route } from './report.route.ts';
import { callbackHttp } from '../../../../shared/http/callback-handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { reportCallback } from '../../../../shared/domain/callbacks.ts';

export const handler = callbackHttp(route, async ({ principal, body }) => ok(await reportCallback(principal.callback, body)));
