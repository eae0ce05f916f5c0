// GET /console/login: the sign-in form (and the browser's pre-session cookie when it has none).
import { route } from './page.route.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { safeNext } from '../../../../shared/console/next-path.ts';
import { signInPage } from './form.tsx';

export const handler = consoleHttp(route, async ({ event, query }) => signInPage(event, safeNext(query.next), undefined));
