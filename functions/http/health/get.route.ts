import type { Route } from '../../../shared/http/route.ts';
import { Health } from '../../../shared/schemas/common.ts';
import { none } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/health',
  handler: 'http/health/get',
  summary: 'Liveness',
  tag: 'Service',
  auth: none,
  grants: [],
  response: Health,
} as const satisfies Route;
