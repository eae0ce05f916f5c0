// GET /api/v1/executions/{executionId}/artifacts/{artifactId}/download
import { route } from './download.route.ts';
import { http } from '../../../../shared/http/handler.ts';
import { ok } from '../../../../shared/http/responses.ts';
import { artifactDownload } from '../../../../shared/domain/executions.ts';

export const handler = http(route, async ({ principal, params, query }) => {
  const link = await artifactDownload(principal.accountId, params.executionId, params.artifactId);
  return query.redirect === '1' ? { statusCode: 302, headers: { location: link.url, 'cache-control': 'no-store' } } : ok(link);
});
