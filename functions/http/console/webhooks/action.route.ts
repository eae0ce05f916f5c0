import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { WebhookParams } from '../../../../shared/schemas/webhooks.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/webhooks/{id}/{action}',
  handler: CONSOLE_FUNCTIONS.change,
  summary: "Save a webhook's edit form, enable, disable or delete it (confirmed), then to its page (303) or the form again with its errors",
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  params: WebhookParams.extend({ action: z.enum(['edit', 'enable', 'disable', 'delete']) }),
  html: true,
  status: 303,
  maxBodyBytes: 64 * 1024,
  errors: [
    ...refuses(400, 'VALIDATION_FAILED', 'CREDENTIALS_REQUIRED', 'SECRET_REQUIRED', 'INVALID_API_KEY_BINDING'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    // Saved by another meanwhile (the form again, 409).
    ...refuses(409, 'CONFLICT'),
  ],
} as const satisfies Route;
