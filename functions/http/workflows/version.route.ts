import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams } from '../../../shared/schemas/engine.ts';
import { VersionSegment, WorkflowVersionView } from '../../../shared/schemas/workflows.ts';
import { read, refuses, workflowReaders } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/workflows/{id}/versions/{version}',
  handler: 'http/workflows/version',
  summary: 'Read one version of a workflow: its definition (secrets masked), when and by whom it was saved',
  tag: 'Console',
  auth: workflowReaders,
  grants: read,
  params: WorkflowParams.extend({ version: VersionSegment }),
  response: WorkflowVersionView,
  errors: [...refuses(404, 'WORKFLOW_VERSION_NOT_FOUND')],
} as const satisfies Route;
