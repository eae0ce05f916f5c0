import { randomUUID } from 'node:crypto';
import { config } from '../../config.ts';
import { logger, logKeys, redactQuery } from '../../logger.ts';
import type { Route } from '../route.ts';
import { clientIp } from '../client-ip.ts';
import type { AppContext, Middleware, MiddlewareRequest } from '../context.ts';

/** The routes whose successful requests' lines are sampled: webhook triggers and the v1 reads. */
export const highVolume = (route: Pick<Route, 'method' | 'path' | 'throttle'>) =>
  route.throttle === 'trigger' || (route.method === 'GET' && route.path.startsWith('/api/v1/'));

/**
 * Outermost middleware: gives the request its id and client address, and on the way out adds
 * `X-Request-Id` and the request's shared headers to whatever response was produced, and writes one
 * access log line (query string redacted, no headers, no body). A high-volume route's successful
 * requests are logged at the rate `REQUEST_LOG_SAMPLE` (by default all); refusals and errors always.
 */
export const requestLog = (route?: Pick<Route, 'method' | 'path' | 'throttle'>): Middleware => {
  const sampled = route !== undefined && highVolume(route);
  const finish = async (request: MiddlewareRequest) => {
    const { app } = request.context as AppContext;
    const response = request.response;
    if (!response) return;
    response.headers = { ...response.headers, ...app.responseHeaders, 'x-request-id': app.requestId };
    if (sampled && (response.statusCode ?? 200) < 400 && Math.random() >= config().REQUEST_LOG_SAMPLE) return;
    logger.info('request', {
      method: request.event.requestContext.http.method,
      path: request.event.rawPath,
      query: redactQuery(request.event.rawQueryString ?? ''),
      status: response.statusCode,
      ms: Date.now() - app.startedAt,
      sourceIp: app.sourceIp,
      principal: app.principal && { kind: app.principal.kind, accountId: app.principal.accountId, userId: app.principal.userId },
    });
  };
  return {
    before: async (request) => {
      const context = request.context as AppContext;
      const requestId = request.event.requestContext?.requestId || randomUUID();
      context.app = { requestId, startedAt: Date.now(), sourceIp: request.event.requestContext.http.sourceIp, responseHeaders: {} };
      // The request's own (its log scope, base.ts): concurrent requests in one process keep theirs apart.
      logKeys({ requestId });
      context.app.sourceIp = clientIp(request.event);
    },
    after: finish,
    onError: finish,
  };
};
