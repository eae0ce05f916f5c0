import type { Route } from '../../../shared/http/route.ts';
import { UpdateWebhookBody, WebhookParams, WebhookView } from '../../../shared/schemas/webhooks.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/webhooks/{id}',
  handler: 'http/webhooks/update',
  summary: 'Update a webhook (partial; clearApiKeyId + secretKey switches to HMAC)',
  tag: 'Webhooks',
  auth: session,
  grants: readWrite,
  params: WebhookParams,
  body: UpdateWebhookBody,
  response: WebhookView,
  maxBodyBytes: 32 * 1024,
  errors: [
    ...refuses(400, 'CREDENTIALS_REQUIRED', 'SECRET_REQUIRED', 'INVALID_API_KEY_BINDING'),
    ...refuses(403, 'NOT_WORKFLOW_EDITOR'),
    // Changed by another meanwhile (it is still there): read it again.
    ...refuses(409, 'CONFLICT'),
  ],
} as const satisfies Route;
