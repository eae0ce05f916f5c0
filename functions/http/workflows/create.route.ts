import type { Route } from '../../../shared/http/route.ts';
import { WorkflowBody } from '../../../shared/schemas/workflows.ts';
import { WorkflowView } from '../../../shared/schemas/engine.ts';
import { DEFINITION_BYTES, readWrite, secretUseErrors, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/workflows',
  handler: 'http/workflows/create',
  summary: 'Create a workflow',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  body: WorkflowBody,
  status: 201,
  response: WorkflowView,
  maxBodyBytes: DEFINITION_BYTES,
  errors: secretUseErrors,
} as const satisfies Route;
