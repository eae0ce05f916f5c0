import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { VersionNumber } from '../../../../shared/schemas/workflows.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/{workflowId}/versions/{version}/restore',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm "Restore this version": a page naming the workflow and the version, and what would change, changing nothing',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: V1WorkflowParams.extend({ version: VersionNumber }),
  errors: [...refuses(403, 'NOT_WORKFLOW_EDITOR'), ...refuses(404, 'WORKFLOW_VERSION_NOT_FOUND')],
} as const satisfies Route;
