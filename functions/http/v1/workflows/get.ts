// GET /api/v1/workflows/{workflowId}
import { route } from '../../../routes.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { requireWorkflow, workflowSummary } from '../../../../shared/domain/workflows.ts';

export const handler = http(route('GET /api/v1/workflows/{workflowId}'), async ({ principal, params }) =>
  ok(workflowSummary(await requireWorkflow(principal.accountId, params.workflowId))),
);
