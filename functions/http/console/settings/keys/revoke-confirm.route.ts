import type { Route } from '../../../../../shared/http/route.ts';
import { KeyParams } from '../../../../../shared/schemas/identity.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/keys/{id}/revoke',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm revoking an API key ("Revoke key \'name\'?"): a page that asks, changing nothing',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  params: KeyParams,
  errors: [...refuses(403, 'NOT_KEY_OWNER')],
} as const satisfies Route;
