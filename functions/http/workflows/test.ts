// POST /api/workflows/test
import { route } from './test.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { testWorkflow } from '../../../shared/domain/workflow-tests.ts';

export const handler = http(route, async ({ principal, body }) => ok(await testWorkflow(principal.accountId, body)));
