// GET /api/workflows/{id}
import { route } from './get.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { requireWorkflow } from '../../../shared/domain/workflow-access.ts';
import { workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, params }) =>
  ok(workflowView(await requireWorkflow(principal.accountId, params.id))),
);
