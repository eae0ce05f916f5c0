import type { Route } from '../../../shared/http/route.ts';
import { InboundRequestParams, ReplayResult } from '../../../shared/schemas/inbound.ts';
import { idempotencyErrors, refuses, session, triggers } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/webhooks/{id}/requests/{requestId}/replay',
  handler: 'http/webhooks/replay',
  summary: "Replay a request of the webhook's inbound log: a new run with its body (Idempotency-Key required)",
  tag: 'Webhooks',
  auth: session,
  // What a trigger does (a large payload kept in the bucket), and reading a large recorded payload back.
  grants: [...triggers, 'bucket:read'],
  params: InboundRequestParams,
  status: 202,
  response: ReplayResult,
  errors: [
    ...idempotencyErrors,
    ...refuses(400, 'IDEMPOTENCY_KEY_REQUIRED'),
    ...refuses(403, 'IP_NOT_ALLOWED'),
    ...refuses(404, 'REQUEST_NOT_FOUND', 'EXECUTION_NOT_FOUND'),
    ...refuses(409, 'REQUEST_NOT_REPLAYABLE', 'WEBHOOK_DISABLED'),
    ...refuses(429, 'RATE_LIMITED'),
  ],
} as const satisfies Route;
