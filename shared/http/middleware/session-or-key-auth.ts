import type { Scope } from '../../db/entities/api-key.ts';
import type { Middleware } from '../context.ts';
import type { HttpEvent } from '../context.ts';
import { presentedBearer } from '../credentials.ts';
import { apiKeyAuth } from './api-key-auth.ts';
import { sessionAuth } from './session-auth.ts';

/** Whether the request presents an API key: a `dyk_` Bearer, or `X-API-Key` without an `Authorization`. */
export const presentsKey = (event: HttpEvent) => {
  const bearer = presentedBearer(event);
  return bearer === undefined ? event.headers['x-api-key'] !== undefined : bearer.startsWith('dyk_');
};

/**
 * A console route a program may read too (`auth: { kind: 'session', keyScope }`): an API key with the
 * scope, checked and metered exactly as on v1 (`apiKeyAuth`), or else the console session
 * (`sessionAuth`). The credential decides which: no fall-through from one to the other.
 */
export const sessionOrKeyAuth = (opts: { keyScope: Scope }): Middleware => {
  const session = sessionAuth({});
  const key = apiKeyAuth({ scope: opts.keyScope });
  return {
    problems: [...(session.problems ?? []), ...(key.problems ?? [])],
    before: (request) => (presentsKey(request.event) ? key.before?.(request) : session.before?.(request)),
  };
};
