// GET /api/v1/workflows/{workflowId}
import { route } from './get.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { requireWorkflow } from '../../../../shared/domain/workflow-access.ts';
import { workflowSummary } from '../../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, params }) =>
  ok(workflowSummary(await requireWorkflow(principal.accountId, params.workflowId))),
);
