import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks/new',
  handler: 'http/console/webhooks/new',
  summary: 'The form that creates a webhook',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
