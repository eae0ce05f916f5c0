// GET /api/health: the function is alive. It needs no credentials and reads no storage, so its
// bundle holds no data client (docs/performance.md "Bundle sizes"). What the hosting process reports
// besides (the local stack's injected faults, docs/local-mode.md) comes from shared/health-report.ts.
import { route } from './get.route.ts';
import { storageFreeHttp } from '../../../shared/http/base.ts';
import { ok } from '../../../shared/http/responses.ts';
import { healthReport } from '../../../shared/health-report.ts';

export const handler = storageFreeHttp(route, async () => ok({ status: 'ok', time: Date.now(), ...healthReport() }));
