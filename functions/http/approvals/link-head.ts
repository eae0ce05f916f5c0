// HEAD of the one-click link: the confirmation page's status and headers.
import { route } from './link-head.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { respond } from './link-answer.ts';

export const handler = http(route, respond);
