import type { Route } from '../../../shared/http/route.ts';
import { none } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/openapi.json',
  handler: 'http/v1/openapi',
  summary: 'This OpenAPI 3.1 document',
  tag: 'Service',
  auth: none,
  grants: [],
} as const satisfies Route;
