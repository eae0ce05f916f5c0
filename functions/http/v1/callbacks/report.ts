// POST /api/v1/callbacks/{callbackId}
import { route } from './report.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { reportCallback } from '../../../../shared/domain/callbacks.ts';

export const handler = http(route, async ({ principal, body }) => ok(await reportCallback(principal.callback, body)));
