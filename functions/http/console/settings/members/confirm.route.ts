import * as z from 'zod';
import type { Route } from '../../../../../shared/http/route.ts';
import { MemberParams } from '../../../../../shared/schemas/identity.ts';
import { CONSOLE_FUNCTIONS, consoleAdmin, read } from '../../../../route-kinds.ts';
import { MEMBER_ACTIONS } from './action-view.tsx';

export const route = {
  method: 'GET',
  path: '/console/members/{id}/{action}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'Confirm a member action ("Change role", "Disable", "Enable", "Remove"; admins): a page that asks, changing nothing',
  tag: 'Console pages',
  auth: consoleAdmin,
  grants: read,
  html: true,
  params: MemberParams.extend({ action: z.enum(MEMBER_ACTIONS) }),
} as const satisfies Route;
