// GET /api/v1/executions/{executionId}
import { route } from './get.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionView, requireExecution } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, params }) =>
  ok(executionView(await requireExecution(principal.accountId, params.executionId))),
);
