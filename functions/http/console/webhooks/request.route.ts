import type { Route } from '../../../../shared/http/route.ts';
import { InboundRequestParams } from '../../../../shared/schemas/inbound.ts';
import { CONSOLE_FUNCTIONS, consolePage, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks/{id}/requests/{requestId}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'One request of a webhook\'s inbound log: its headers as recorded, its body, and "Replay" when it may be replayed',
  tag: 'Console pages',
  auth: consolePage,
  grants: ['table:read', 'bucket:read'],
  params: InboundRequestParams,
  html: true,
  errors: [...refuses(404, 'REQUEST_NOT_FOUND')],
} as const satisfies Route;
