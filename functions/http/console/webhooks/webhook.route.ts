import type { Route } from '../../../../shared/http/route.ts';
import { WebhookParams } from '../../../../shared/schemas/webhooks.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks/{id}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's webhook page: its trigger URL, a curl example, stats, recent runs and actions",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  params: WebhookParams,
  html: true,
} as const satisfies Route;
