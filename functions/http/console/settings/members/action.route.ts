import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { MemberParams } from '../../../../../shared/schemas/identity.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, readWrite, refuses } from '../../../../route-kinds.ts';
import { MEMBER_ACTIONS } from './action-view.tsx';

export const route = {
  method: 'POST',
  path: '/console/members/{id}/{action}',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Change a member's role, disable, enable or remove them (admins; the confirmation page's form), then back to the members (303)",
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: readWrite,
  html: true,
  status: 303,
  maxBodyBytes: 4096,
  params: MemberParams.extend({ action: z.enum(MEMBER_ACTIONS) }),
  errors: [...refuses(400, 'VALIDATION_FAILED'), ...refuses(409, 'LAST_ADMIN', 'MEMBER_CHANGED')],
} as const satisfies Route;
