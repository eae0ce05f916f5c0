// GET /api/webhook-trigger/approval/{approvalId}/{decision}: the confirmation page; `confirm=1` decides.
import { route } from './link.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { respond } from './link-answer.ts';

export const handler = pageHttp(route, respond);
