import type { Route } from '../../../shared/http/route.ts';
import { WebhookParams, WebhookView } from '../../../shared/schemas/webhooks.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/webhooks/{id}',
  handler: 'http/webhooks/get',
  summary: 'Read a webhook',
  tag: 'Webhooks',
  auth: session,
  grants: read,
  params: WebhookParams,
  response: WebhookView,
} as const satisfies Route;
