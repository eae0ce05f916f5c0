import type { Route } from '../../../../shared/http/route.ts';
import { consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/new',
  handler: 'http/console/workflows/new',
  summary: "The console's workflow editor for a new workflow: Name, Definition (checked as you type), Save",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
