import type { Route } from '../../../shared/http/route.ts';
import { InboundParams, InboundQuery, InboundRequestList } from '../../../shared/schemas/inbound.ts';
import { cursorErrors, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/webhooks/{id}/requests',
  handler: 'http/webhooks/requests',
  summary: "The webhook's inbound log: its requests, accepted and refused, newest first",
  tag: 'Webhooks',
  auth: session,
  // A large accepted payload is read back (its start) from the artifacts bucket.
  grants: ['table:read', 'bucket:read'],
  params: InboundParams,
  query: InboundQuery,
  response: InboundRequestList,
  errors: [...cursorErrors],
} as const satisfies Route;
