import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { WebhookParams } from '../../../../shared/schemas/webhooks.ts';
import { CONSOLE_FUNCTIONS, consolePage, read, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'GET',
  path: '/console/webhooks/{id}/{page}',
  handler: CONSOLE_FUNCTIONS.read,
  summary: "A webhook's edit form, or the confirmation of its deletion (changes nothing)",
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  params: WebhookParams.extend({ page: z.enum(['edit', 'delete']) }),
  html: true,
  errors: [...refuses(403, 'NOT_WORKFLOW_EDITOR')],
} as const satisfies Route;
