import type { Route } from '../../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, readWrite, refuses } from '../../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/members',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Add a member (admins): the initial password on the answer itself (200, no-store), once per form',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: readWrite,
  html: true,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts), as POST /api/members.
  memoryMb: 1024,
  errors: [...refuses(400, 'VALIDATION_FAILED', 'INVALID_FORM_ID'), ...refuses(409, 'EMAIL_TAKEN', 'FORM_ALREADY_SENT')],
} as const satisfies Route;
