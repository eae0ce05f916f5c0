import type { Route } from '../../../../shared/http/route.ts';
import { none } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/schemas/workflow.json',
  handler: 'http/v1/schemas/workflow',
  summary: 'The JSON Schema of a workflow file (`<key>.json`: key, name, definition), for editors and `flowgate validate`',
  tag: 'Service',
  auth: none,
  grants: [],
} as const satisfies Route;
