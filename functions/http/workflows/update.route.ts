import type { Route } from '../../../shared/http/route.ts';
import { WorkflowParams, WorkflowView } from '../../../shared/schemas/engine.ts';
import { WorkflowPatch } from '../../../shared/schemas/workflows.ts';
import { DEFINITION_BYTES, readWrite, refuses, session, secretUseErrors } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/workflows/{id}',
  handler: 'http/workflows/update',
  summary: 'Update a workflow (owner, editors, admins)',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  params: WorkflowParams,
  body: WorkflowPatch,
  response: WorkflowView,
  maxBodyBytes: DEFINITION_BYTES,
  errors: [...refuses(409, 'WORKFLOW_CHANGED'), ...refuses(403, 'NOT_WORKFLOW_EDITOR'), ...secretUseErrors],
} as const satisfies Route;
