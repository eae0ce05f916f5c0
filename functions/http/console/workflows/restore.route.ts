import type { Route } from '../../../../shared/http/route.ts';
import { V1WorkflowParams } from '../../../../shared/schemas/engine.ts';
import { VersionNumber } from '../../../../shared/schemas/workflows.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses, secretUseErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/workflows/{workflowId}/versions/{version}/restore',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Restore a workflow's version (the confirmation's form): its definition saved as a new version, then the workflow's page (303)",
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  params: V1WorkflowParams.extend({ version: VersionNumber }),
  errors: [
    ...refuses(400, 'VALIDATION_FAILED'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    ...refuses(404, 'WORKFLOW_VERSION_NOT_FOUND'),
    ...refuses(409, 'WORKFLOW_CHANGED'),
    ...secretUseErrors,
  ],
} as const satisfies Route;
