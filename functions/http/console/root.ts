// GET /: the console (people open the service's address in a browser).
import { route } from './root.route.ts';
import { consoleHttp } from '../../../shared/console/handler.tsx';

export const handler = consoleHttp(route, async () => ({
  statusCode: 302,
  headers: { location: '/console', 'cache-control': 'no-store' },
}));
