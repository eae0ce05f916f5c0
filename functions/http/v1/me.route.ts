import type { Route } from '../../../shared/http/route.ts';
import { V1Me } from '../../../shared/schemas/identity.ts';
import { read } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/v1/me',
  handler: 'http/v1/me',
  summary: 'The calling key, its account and rate limit',
  tag: 'v1',
  auth: { kind: 'apiKey', scope: 'WORKFLOW_READ' },
  grants: read,
  response: V1Me,
} as const satisfies Route;
