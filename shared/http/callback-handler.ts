import type { HttpResult } from './context.ts';
import { counted, type Input } from './handler.ts';
import { handlerWith, stackWith } from './base.ts';
import { callbackAuth } from './middleware/callback-auth.ts';
import type { Route } from './route.ts';

/**
 * `http` for the callback routes: the house stack with the callback's own token as the credential
 * (`callback-auth`). In a module of its own, so no other route's bundle holds that code.
 */
export function callbackHttp<R extends Route & { auth: { kind: 'callback' } }>(
  route: R,
  fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>,
) {
  return counted(handlerWith(route, stackWith(route, callbackAuth()), fn));
}
