// HEAD of the one-click link: the confirmation page's status and headers.
import { route } from './link-head.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { respond } from './link-answer.ts';

export const handler = pageHttp(route, respond);
