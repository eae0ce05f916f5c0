// HEAD /api/reviews/{approvalId}?token=…: the confirmation page's status and headers.
import { route } from './head.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { respond } from './page-answer.ts';

export const handler = http(route, respond);
