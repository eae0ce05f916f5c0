// GET /api/webhook-trigger/approval/{approvalId}/{decision}: the confirmation page; `confirm=1` decides.
import { route } from './link.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { respond } from './link-answer.ts';

export const handler = http(route, respond);
