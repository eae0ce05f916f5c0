// Any request no route matches: 405 when the path exists with another method, else 404; the root redirects to the console.
import middy from '@middy/core';
import { routes } from '../routes.ts';
import { AppError, notFound } from '../../shared/errors.ts';
import { inLogScope } from '../../shared/logger.ts';
import { requestLog } from '../../shared/http/middleware/request-log.ts';
import { problemDetails } from '../../shared/http/middleware/problem.ts';
import { matchPath } from '../../shared/http/match.ts';
import type { HttpEvent, HttpResult } from '../../shared/http/context.ts';
import type { Context } from 'aws-lambda';
import { errorPage } from '../../shared/console/console-http.tsx';
import { isConsolePage } from '../../shared/http/route.ts';

const refuse = async (event: HttpEvent): Promise<HttpResult> => {
  // The service's root, opened in a browser: the console. Answered here rather than by a route of its
  // own: each route is 3 resources of the stack's template (docs/deploying.md, "Room to grow").
  if (event.rawPath === '/' && ['GET', 'HEAD'].includes(event.requestContext.http.method))
    return { statusCode: 302, headers: { location: '/console', 'cache-control': 'no-store' } };
  const allowed = routes.filter((r) => matchPath(r.path, event.rawPath)).map((r) => r.method);
  if (allowed.length === 0) throw notFound('NOT_FOUND', 'No such endpoint.');
  throw new AppError('method_not_allowed', 'METHOD_NOT_ALLOWED', 'Method not allowed', `Use ${allowed.join(', ')}.`, {
    headers: { allow: allowed.join(', ') },
  });
};

const api = middy<HttpEvent, HttpResult, Error, Context>().use([requestLog(), problemDetails()]).handler(refuse);
// A browser's unknown console path gets the console's page, not problem+json.
const pages = middy<HttpEvent, HttpResult, Error, Context>()
  .use([requestLog(), problemDetails((error, requestId) => errorPage(error, requestId))])
  .handler(refuse);

// In a log scope of its own, as every route's handler (shared/http/base.ts): its lines carry its request id.
export const handler = (event: HttpEvent, context: Context) =>
  inLogScope(() => (isConsolePage({ path: event.rawPath }) ? pages : api)(event, context));
