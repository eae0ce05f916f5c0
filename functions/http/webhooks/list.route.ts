import type { Route } from '../../../shared/http/route.ts';
import { WebhookList } from '../../../shared/schemas/webhooks.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/webhooks',
  handler: 'http/webhooks/list',
  summary: 'List webhooks (own; admins: the account)',
  tag: 'Webhooks',
  auth: session,
  grants: read,
  response: WebhookList,
} as const satisfies Route;
