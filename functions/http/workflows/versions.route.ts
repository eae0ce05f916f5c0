import type { Route } from '../../../shared/http/route.ts';
import { PageQuery, WorkflowParams } from '../../../shared/schemas/engine.ts';
import { WorkflowVersionList } from '../../../shared/schemas/workflows.ts';
import { cursorErrors, read, workflowReaders } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/workflows/{id}/versions',
  handler: 'http/workflows/versions',
  summary: "List a workflow's versions, newest first: each one's number, when and by whom it was saved",
  tag: 'Console',
  auth: workflowReaders,
  grants: read,
  params: WorkflowParams,
  query: PageQuery,
  response: WorkflowVersionList,
  errors: [...cursorErrors],
} as const satisfies Route;
