// GET /api/workflows/{id}
import { route } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { requireWorkflow, workflowView } from '../../../shared/domain/workflows.ts';

export const handler = http(route('GET /api/workflows/{id}'), async ({ principal, params }) =>
  ok(workflowView(await requireWorkflow(principal.accountId, params.id))),
);
