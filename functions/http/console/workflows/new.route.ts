import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, read } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/workflows/new',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's workflow editor for a new workflow: Name, Definition (checked as you type), Save",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
} as const satisfies Route;
