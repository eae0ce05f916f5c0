import type { Route } from '../../../../shared/http/route.ts';
import { CONSOLE_FUNCTIONS, consolePage, readWrite, refuses } from '../../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/console/webhooks',
  handler: CONSOLE_FUNCTIONS.change,
  summary: 'Create a webhook (the form): its page with the secret shown once, or the form again with its errors',
  tag: 'Console pages',
  auth: consolePage,
  grants: readWrite,
  html: true,
  maxBodyBytes: 64 * 1024,
  errors: [
    ...refuses(400, 'VALIDATION_FAILED', 'CREDENTIALS_REQUIRED', 'SECRET_REQUIRED', 'INVALID_API_KEY_BINDING', 'INVALID_FORM_ID'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED'),
    ...refuses(404, 'WORKFLOW_NOT_FOUND'),
    ...refuses(409, 'FORM_ALREADY_SENT'),
  ],
} as const satisfies Route;
