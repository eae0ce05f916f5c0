import type { Route } from '../../../shared/http/route.ts';
import { TriggerParams, TriggerPayload, TriggerAnswer } from '../../../shared/schemas/webhooks.ts';
import { idempotencyErrors, TRIGGER_BYTES, triggers, webhook } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/webhooks/{webhookId}/trigger',
  handler: 'http/webhooks/trigger',
  summary: 'Trigger the bound workflow',
  tag: 'Webhook Trigger',
  auth: webhook,
  grants: triggers,
  throttle: 'trigger',
  params: TriggerParams,
  body: TriggerPayload,
  response: TriggerAnswer,
  maxBodyBytes: TRIGGER_BYTES,
  errors: [...idempotencyErrors],
} as const satisfies Route;
