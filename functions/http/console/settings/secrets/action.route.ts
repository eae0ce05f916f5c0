import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { SecretParams } from '../../../../../shared/schemas/secrets.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, refuses, sealsSecrets } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/secrets/{name}/{action}',
  handler: CONSOLE_FUNCTIONS.secrets,
  summary: '"Replace value" (an empty value keeps it) or the confirmed "Delete" of a secret (admins), then back to the list (303)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: sealsSecrets,
  html: true,
  status: 303,
  maxBodyBytes: 64 * 1024,
  params: SecretParams.extend({ action: z.enum(['edit', 'delete']) }),
  errors: [...refuses(400, 'VALIDATION_FAILED')],
} as const satisfies Route;
