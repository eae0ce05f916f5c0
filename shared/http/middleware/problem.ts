import { AppError } from '../../errors.ts';
import { logger } from '../../logger.ts';
import type { AppContext, HttpResult, Middleware } from '../context.ts';

/** Render an error as RFC 9457 problem+json. Unknown errors become a 500 `INTERNAL` and are logged. */
export function problemResult(error: unknown, requestId: string): HttpResult {
  const e = error instanceof AppError ? error : new AppError(500, 'INTERNAL', 'Internal error', 'Something went wrong on our side.');
  if (!(error instanceof AppError)) logger.error('unhandled error', { error: error as Error });
  return {
    statusCode: e.statusCode,
    headers: { 'content-type': 'application/problem+json', ...e.extra.headers },
    body: JSON.stringify({
      type: 'about:blank',
      title: e.title,
      status: e.statusCode,
      code: e.code,
      detail: e.message,
      requestId,
      ...e.extra.body,
    }),
  };
}

/** The one place errors become HTTP responses. */
export const problemDetails = (): Middleware => ({
  onError: async (request) => {
    request.response = problemResult(request.error, (request.context as AppContext).app.requestId);
  },
});
