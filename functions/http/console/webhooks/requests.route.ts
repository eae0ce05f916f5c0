import type { Route } from '../../../../shared/http/route.ts';
import { InboundParams, InboundQuery } from '../../../../shared/schemas/inbound.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks/{id}/requests',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "A webhook's inbound log: the requests it received, accepted and refused with why, newest first",
  tag: 'Console pages',
  auth: consolePage,
  // As the API's log: a large accepted payload's start is read back from the artifacts bucket.
  grants: ['table:read', 'bucket:read'],
  params: InboundParams,
  query: InboundQuery,
  html: true,
  errors: [...cursorErrors],
} as const satisfies Route;
