// POST of the one-click link: the confirmation page's button (`confirm=1`) decides.
import { route } from './link-confirm.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { respond } from './link-answer.ts';

export const handler = pageHttp(route, respond);
