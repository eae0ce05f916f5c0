// POST /api/v1/executions/{executionId}/cancel
import { route } from './cancel.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionView } from '../../../../shared/domain/executions.ts';
import { cancelRun } from '../../../../shared/engine/cancel.ts';

export const handler = http(route, async ({ principal, params, body }) =>
  ok(executionView(await cancelRun(principal.accountId, params.executionId, body.reason, undefined, Date.now(), principal))),
);
