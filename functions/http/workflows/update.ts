// PUT /api/workflows/{id}
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { updateWorkflow, workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route('PUT /api/workflows/{id}'), async ({ principal, params, body }) =>
  ok(workflowView(await updateWorkflow(principal, params.id, body))),
);
