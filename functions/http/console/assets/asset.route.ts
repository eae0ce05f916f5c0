import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, none } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/assets/{name}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "The console's stylesheets and scripts, by content-hashed name (cacheable for a year)",
  tag: 'Console pages',
  auth: none,
  grants: [],
  html: true,
  params: z.object({ name: z.string().regex(/^[a-z]+\.[0-9a-f]{12}\.(css|js)$/) }),
} as const satisfies Route;
