import type { Route } from '../../../shared/http/route.ts';
import { WorkflowCodeBody, WorkflowCodeChange, WorkflowCodeQuery, WorkflowKeyParams } from '../../../shared/schemas/workflow-file.ts';
import { DEFINITION_BYTES, readWrite, refuses, secretUseErrors, session } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/workflow-keys/{key}',
  handler: 'http/workflows/put-by-key',
  summary:
    'Apply a workflow file (workflows as code): create the workflow with this key, update it, or leave it when nothing differs; `?dryRun=true` only says which',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  params: WorkflowKeyParams,
  query: WorkflowCodeQuery,
  body: WorkflowCodeBody,
  response: WorkflowCodeChange,
  maxBodyBytes: DEFINITION_BYTES,
  errors: [
    ...refuses(409, 'WORKFLOW_CHANGED', 'WORKFLOW_KEY_TAKEN'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    ...refuses(400, 'INVALID_EDITORS'),
    ...secretUseErrors,
  ],
} as const satisfies Route;
