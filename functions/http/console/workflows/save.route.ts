import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, DEFINITION_BYTES, readWrite, refuses, secretUseErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/{workflowId}/edit',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Save the console editor's draft as the workflow's next version, then its page (303); a refused draft is the editor again",
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  params: V1WorkflowParams,
  maxBodyBytes: 3 * DEFINITION_BYTES + 4096,
  errors: [
    ...refuses(400, 'VALIDATION_FAILED'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    ...refuses(409, 'WORKFLOW_CHANGED'),
    ...secretUseErrors,
  ],
} as const satisfies Route;
