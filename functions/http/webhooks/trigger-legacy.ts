// POST /api/webhook-trigger/{webhookId}: the spec's legacy path, the same implementation.
import { route } from './trigger-legacy.route.ts';
import { webhookHttp } from '../../../shared/http/handler.ts';
import { respond } from './trigger.ts';

export const handler = webhookHttp(route, respond);
