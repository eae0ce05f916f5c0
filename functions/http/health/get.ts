// GET /api/health: the function is alive. It needs no credentials and reads no storage, so its
// bundle holds no data client (docs/performance.md "Bundle sizes").
import { route } from './get.route.ts';
import { storageFreeHttp } from '../../../shared/http/base.ts';
import { ok } from '../../../shared/http/responses.ts';

export const handler = storageFreeHttp(route, async () => ok({ status: 'ok', time: Date.now() }));
