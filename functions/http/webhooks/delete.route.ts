import type { Route } from '../../../shared/http/route.ts';
import { WebhookParams } from '../../../shared/schemas/webhooks.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/webhooks/{id}',
  handler: 'http/webhooks/delete',
  summary: 'Delete a webhook',
  tag: 'Webhooks',
  auth: session,
  grants: readWrite,
  params: WebhookParams,
  status: 204,
  errors: [...refuses(403, 'NOT_WORKFLOW_EDITOR')],
} as const satisfies Route;
