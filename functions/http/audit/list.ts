// GET /api/audit: a JSON page, or with `Accept: application/x-ndjson` every matching entry as NDJSON.
import { route } from './list.route.ts';
import { http } from '../../../shared/http/handler.ts';
import { ok } from '../../../shared/http/responses.ts';
import { exportAudit, ndjson, pageAudit, wantsNdjson } from '../../../shared/domain/audit.ts';

export const handler = http(route, async ({ principal, query, event }) => {
  const { limit, cursor, ...filters } = query;
  if (wantsNdjson(event.headers.accept))
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' },
      body: ndjson(await exportAudit(principal, filters)),
    };
  return ok(await pageAudit(principal, filters, limit, cursor));
});
