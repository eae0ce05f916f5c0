import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/keys',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Create an API key as the signed-in user: the token on the answer itself (200, no-store), once per form',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  maxBodyBytes: 4096,
  errors: [...refuses(400, 'VALIDATION_FAILED', 'INVALID_FORM_ID'), ...refuses(409, 'FORM_ALREADY_SENT')],
} as const satisfies Route;
