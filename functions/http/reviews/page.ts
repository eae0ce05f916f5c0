// GET /api/reviews/{approvalId}?token=…: the confirmation page of a reviewer's link.
import { route } from './page.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { respond } from './page-answer.ts';

export const handler = http(route, respond);
