import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks',
  handler: 'http/console/webhooks/list',
  summary: "The console's webhooks list (own; admins: the account's)",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
