import { AppError } from '../../errors.ts';
import { httpStatus } from '../../http-status.ts';
import { logger } from '../../logger.ts';
import type { AppContext, HttpResult, Middleware } from '../context.ts';
import { escapeHtml } from '../../escape-html.ts';
import { htmlPage } from '../html.ts';

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

/** The same error as an HTML page (the one-click approval pages). */
export function problemPage(error: unknown, requestId: string): HttpResult {
  const problem = problemResult(error, requestId);
  const { title, detail } = JSON.parse(problem.body as string) as { title: string; detail: string };
  const page = htmlPage(
    problem.statusCode ?? 500,
    title,
    `<p>${escapeHtml(detail)}</p><p class="note">Request ${escapeHtml(requestId)}</p>`,
  );
  return { ...page, headers: { ...problem.headers, ...page.headers } };
}

/** The one place errors become HTTP responses: problem+json, or HTML pages for `html` routes. */
export const problemDetails = (opts: { html?: boolean } = {}): Middleware => ({
  onError: async (request) => {
    const render = opts.html ? problemPage : problemResult;
    request.response = render(request.error, (request.context as AppContext).app.requestId);
  },
});
