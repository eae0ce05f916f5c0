// GET /console/login: the sign-in form.
import { route } from './login-page.route.ts';
import { consoleHttp } from '../../../shared/console/console-http.tsx';
import { safeNext } from '../../../shared/console/next-path.ts';
import { signInPage } from './login-form.tsx';

export const handler = consoleHttp(route, async ({ query }) => signInPage(safeNext(query.next), undefined));
