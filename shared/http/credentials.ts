import type { HttpEvent } from './context.ts';

const bearer = (h: string | undefined) => {
  const m = h && /^Bearer[ \t]+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
};

/**
 * The credential presented, the first present of: `Authorization: Bearer`, `X-API-Key`, and (where
 * the endpoint allows it) the `api_key` query parameter. A later one is never a fall-back: an
 * invalid Bearer is not rescued by a valid X-API-Key. `''` means a header was present but unusable.
 */
export function presentedKey(event: HttpEvent, allowQuery: boolean): string | undefined {
  const auth = event.headers.authorization;
  if (auth !== undefined) return bearer(auth) ?? '';
  const header = event.headers['x-api-key'];
  if (header !== undefined) return header.trim();
  return allowQuery ? event.queryStringParameters?.api_key : undefined;
}

export const presentedBearer = (event: HttpEvent) => {
  const auth = event.headers.authorization;
  return auth === undefined ? undefined : (bearer(auth) ?? '');
};
