// POST /api/workflows
import { route } from './create.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { created } from '../../../shared/http/responses.ts';
import { createWorkflow, workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route, async ({ principal, body }) => {
  const w = await createWorkflow(principal, body);
  return created(workflowView(w), `/api/workflows/${w.workflowId}`);
});
