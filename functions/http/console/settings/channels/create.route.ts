import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, refuses, sealsSecrets } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/channels/new',
  handler: CONSOLE_FUNCTIONS.secrets,
  summary: 'The "Create channel" form (admins): creates it as the API does, then to its page (303)',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: sealsSecrets,
  html: true,
  status: 303,
  maxBodyBytes: 16 * 1024,
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...refuses(409, 'CHANNEL_EXISTS')],
} as const satisfies Route;
