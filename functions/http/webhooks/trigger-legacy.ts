// POST /api/webhook-trigger/{webhookId}: the spec's legacy path, the same implementation.
export { handler } from './trigger.ts';
