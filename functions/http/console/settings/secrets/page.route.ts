import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { SecretParams } from '../../../../../shared/schemas/secrets.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, read } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/secrets/{name}/{action}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'A secret\'s "Replace value" form, or the confirmation of its deletion (admins)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
  params: SecretParams.extend({ action: z.enum(['edit', 'delete']) }),
} as const satisfies Route;
