import type { Route } from '../../../shared/http/route.ts';
import { PageQuery, WorkflowViewList } from '../../../shared/schemas/engine.ts';
import { cursorErrors, read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/workflows',
  handler: 'http/workflows/list',
  summary: 'List the account workflows',
  tag: 'Console',
  auth: session,
  grants: read,
  query: PageQuery,
  response: WorkflowViewList,
  errors: [...cursorErrors],
} as const satisfies Route;
