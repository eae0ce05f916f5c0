// PUT /api/workflows/{id}
import { route } from './update.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateWorkflow, workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, params, body }) =>
  ok(workflowView(await updateWorkflow(principal, params.id, body))),
);
