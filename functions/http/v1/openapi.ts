// GET /api/v1/openapi.json
import { route } from './openapi.route.ts';
import { routes } from '../../routes.ts';
import { http } from '../../../shared/http/handler.ts';
import { openApiDocument } from '../../../shared/http/openapi.ts';

let doc: string | undefined;

export const handler = http(route, async () => {
  doc ??= JSON.stringify(openApiDocument(routes));
  return { statusCode: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body: doc };
});
