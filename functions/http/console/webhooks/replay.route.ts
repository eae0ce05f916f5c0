import type { Route } from '../../../../shared/http/route.ts';
import { InboundRequestParams } from '../../../../shared/schemas/inbound.ts';
import { CONSOLE_FUNCTIONS, consolePage, idempotencyErrors, refuses, triggers } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/webhooks/{id}/requests/{requestId}/replay',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Replay a request of a webhook's inbound log as the signed-in user, then to the new run (303) or the request again with why not",
  tag: 'Console pages',
  auth: consolePage,
  // As the API's replay: what a trigger does (a large payload kept in the bucket), and reading a large recorded payload back.
  grants: [...triggers, 'bucket:read'],
  params: InboundRequestParams,
  html: true,
  status: 303,
  errors: [
    ...idempotencyErrors,
    ...refuses(400, 'IDEMPOTENCY_KEY_REQUIRED'),
    ...refuses(403, 'IP_NOT_ALLOWED'),
    ...refuses(404, 'REQUEST_NOT_FOUND', 'EXECUTION_NOT_FOUND'),
    ...refuses(409, 'REQUEST_NOT_REPLAYABLE', 'WEBHOOK_DISABLED'),
    ...refuses(429, 'RATE_LIMITED'),
  ],
} as const satisfies Route;
