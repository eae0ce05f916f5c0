// GET /api/reviews/{approvalId}?token=…: the confirmation page of a reviewer's link.
import { route } from './page.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { respond } from './page-answer.ts';

export const handler = pageHttp(route, respond);
