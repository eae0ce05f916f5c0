// GET /api/v1/executions/{executionId}
import { route } from '../../../routes.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionView, requireExecution } from '../../../../shared/domain/executions.ts';

export const handler = http(route('GET /api/v1/executions/{executionId}'), async ({ principal, params }) =>
  ok(executionView(await requireExecution(principal.accountId, params.executionId))),
);
