import type { Route } from '../../../shared/http/route.ts';
import { InboundRequestParams, InboundRequestView } from '../../../shared/schemas/inbound.ts';
import { refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/webhooks/{id}/requests/{requestId}',
  handler: 'http/webhooks/request',
  summary: "One request of the webhook's inbound log",
  tag: 'Webhooks',
  auth: session,
  grants: ['table:read', 'bucket:read'],
  params: InboundRequestParams,
  response: InboundRequestView,
  errors: [...refuses(404, 'REQUEST_NOT_FOUND')],
} as const satisfies Route;
