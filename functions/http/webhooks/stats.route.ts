import type { Route } from '../../../shared/http/route.ts';
import { WebhookParams, WebhookStats } from '../../../shared/schemas/webhooks.ts';
import { read, session } from '../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/api/webhooks/{id}/stats',
  handler: 'http/webhooks/stats',
  summary: 'Trigger statistics (30 daily buckets)',
  tag: 'Webhooks',
  auth: session,
  grants: read,
  params: WebhookParams,
  response: WebhookStats,
} as const satisfies Route;
