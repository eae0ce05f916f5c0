import { AppError } from '../../errors.ts';
import { httpStatus } from '../../http-status.ts';
import { logger } from '../../logger.ts';
import type { AppContext, HttpResult, Middleware } from '../context.ts';

/** Render an error as RFC 9457 problem+json. Unknown errors become a 500 `INTERNAL` and are logged. */
export function problemResult(error: unknown, requestId: string): HttpResult {
  const e = error instanceof AppError ? error : new AppError('internal', 'INTERNAL', 'Internal error', 'Something went wrong on our side.');
  if (!(error instanceof AppError)) logger.error('unhandled error', { error: error as Error });
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
