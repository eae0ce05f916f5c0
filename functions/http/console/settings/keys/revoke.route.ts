import type { Route } from '../../../../../shared/http/route.ts';
import { KeyParams } from '../../../../../shared/schemas/identity.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/keys/{id}/revoke',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Revoke an API key as the signed-in user (the confirmation page's form), then back to the keys (303)",
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  status: 303,
  params: KeyParams,
  errors: [...refuses(403, 'NOT_KEY_OWNER')],
} as const satisfies Route;
