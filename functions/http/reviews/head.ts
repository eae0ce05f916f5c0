// HEAD /api/reviews/{approvalId}?token=…: the confirmation page's status and headers.
import { route } from './head.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { respond } from './page-answer.ts';

export const handler = pageHttp(route, respond);
