import type { Route } from '../../../shared/http/route.ts';
import { CreateWebhookBody, WebhookView } from '../../../shared/schemas/webhooks.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/webhooks',
  handler: 'http/webhooks/create',
  summary: 'Create a webhook',
  tag: 'Webhooks',
  auth: session,
  grants: readWrite,
  body: CreateWebhookBody,
  status: 201,
  response: WebhookView,
  maxBodyBytes: 32 * 1024,
  errors: [...refuses(400, 'CREDENTIALS_REQUIRED', 'SECRET_REQUIRED'), ...refuses(403, 'NOT_WORKFLOW_EDITOR', 'PLAN_LIMIT_REACHED')],
} as const satisfies Route;
