import type { Route } from '../../../../shared/http/route.ts';
import { PageQuery, WorkflowSummaryList } from '../../../../shared/schemas/engine.ts';
import { cursorErrors, read, wfRead } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/workflows',
  handler: 'http/v1/workflows/list',
  summary: 'List workflows',
  tag: 'Workflow V1',
  auth: wfRead,
  grants: read,
  query: PageQuery,
  response: WorkflowSummaryList,
  errors: [...cursorErrors],
} as const satisfies Route;
