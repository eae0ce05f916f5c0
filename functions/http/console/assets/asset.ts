// GET /console/assets/{name}: an asset by its hashed name; its content never changes under that name.
import { gzipSync } from 'node:zlib';
import { route } from './asset.route.ts';
import { notFound } from '../../../../shared/errors.ts';
import { consoleHttp } from '../../../../shared/console/console-http.tsx';
import { BODIES } from '../../../../shared/console/asset-bodies.generated.ts';

const zipped = new Map<string, string>();
const gzipped = (name: string, body: string) => {
  const done = zipped.get(name);
  if (done !== undefined) return done;
  const z = gzipSync(body, { level: 9 }).toString('base64');
  zipped.set(name, z);
  return z;
};

export const handler = consoleHttp(route, async ({ params, event }) => {
  const asset = Object.hasOwn(BODIES, params.name) ? BODIES[params.name] : undefined;
  if (!asset) throw notFound('ASSET_NOT_FOUND', 'No such asset.');
  const headers = {
    'content-type': asset.type,
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
    vary: 'accept-encoding',
  };
  if (!/\bgzip\b/i.test(event.headers['accept-encoding'] ?? '')) return { statusCode: 200, headers, body: asset.body };
  return {
    statusCode: 200,
    headers: { ...headers, 'content-encoding': 'gzip' },
    body: gzipped(params.name, asset.body),
    isBase64Encoded: true,
  };
});
