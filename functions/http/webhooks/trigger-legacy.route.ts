import type { Route } from '../../../shared/http/route.ts';
import { TriggerParams, TriggerPayload, TriggerResult } from '../../../shared/schemas/webhooks.ts';
import { TRIGGER_BYTES, triggers, webhook } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/webhook-trigger/{webhookId}',
  handler: 'http/webhooks/trigger-legacy',
  summary: 'Trigger (legacy path, identical behaviour)',
  tag: 'Webhook Trigger',
  auth: webhook,
  grants: triggers,
  throttle: 'trigger',
  params: TriggerParams,
  body: TriggerPayload,
  response: TriggerResult,
  maxBodyBytes: TRIGGER_BYTES,
} as const satisfies Route;
