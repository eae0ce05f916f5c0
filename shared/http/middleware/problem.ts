import { AppError, toAppError } from '../../errors.ts';
import { httpStatus } from '../../http-status.ts';
import { logger } from '../../logger.ts';
import type { AppContext, HttpResult, Middleware } from '../context.ts';

/**
 * Render an error as RFC 9457 problem+json. A conflict or throttle of AWS that outlived its retries is
 * a 503 with Retry-After; other unknown errors a 500 `INTERNAL`; both are logged (`toAppError`).
 */
export function problemResult(error: unknown, requestId: string): HttpResult {
  const e = toAppError(error);
  if (!(error instanceof AppError))
    logger.error(e.kind === 'internal' ? 'unhandled error' : 'AWS refused for now', { error: error as Error });
  const status = httpStatus(e);
  return {
    statusCode: status,
    headers: { 'content-type': 'application/problem+json', ...e.extra.headers },
    body: JSON.stringify({
      type: 'about:blank',
      title: e.title,
      status,
      code: e.code,
      detail: e.message,
      requestId,
      ...e.extra.body,
    }),
  };
}

/** Renders an error as a response: problem+json (`problemResult`), or an HTML page for `html` routes (page-handler.ts). */
export type ProblemRenderer = (error: unknown, requestId: string) => HttpResult;

/** The one place errors become HTTP responses: problem+json, or what `render` makes of them (an HTML route's pages). */
export const problemDetails = (render: ProblemRenderer = problemResult): Middleware => ({
  onError: async (request) => {
    request.response = render(request.error, (request.context as AppContext).app.requestId);
  },
});
