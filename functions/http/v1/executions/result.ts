// GET /api/v1/executions/{executionId}/result
import { route } from '../../../routes.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionResult } from '../../../../shared/domain/executions.ts';

export const handler = http(route('GET /api/v1/executions/{executionId}/result'), async ({ principal, params }) =>
  ok(await executionResult(principal.accountId, params.executionId)),
);
