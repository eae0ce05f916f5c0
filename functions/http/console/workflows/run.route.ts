import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/{workflowId}/run',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The "Run workflow" form: a field per declared variable (or a JSON input), "Start run"',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: V1WorkflowParams,
} as const satisfies Route;
