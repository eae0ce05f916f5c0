import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/{workflowId}/edit',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's workflow editor for a workflow (its owner, editors and admins): Name, Definition, Save",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: V1WorkflowParams,
  errors: [...refuses(403, 'NOT_WORKFLOW_EDITOR')],
} as const satisfies Route;
