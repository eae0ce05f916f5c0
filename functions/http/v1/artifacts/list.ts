// GET /api/v1/executions/{executionId}/artifacts
import { route } from './list.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { artifactsOf } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, params }) => ok(await artifactsOf(principal.accountId, params.executionId)));
