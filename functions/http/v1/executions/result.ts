// GET /api/v1/executions/{executionId}/result
import { route } from './result.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { executionResult } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, params }) => ok(await executionResult(principal.accountId, params.executionId)));
