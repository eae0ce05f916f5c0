import { handlerWith, type Input, type PageParts } from './base.ts';
import type { HttpResult } from './context.ts';
import { counted, stackFor } from './handler.ts';
import { errorPage } from './html.tsx';
import { problemResult } from './middleware/problem.ts';
import { pageForms } from './page-form.ts';
import type { Route } from './route.ts';

/** An error as an HTML page (the one-click and reviewer pages): the problem's title, detail and refused fields, and the request id. */
export function problemPage(error: unknown, requestId: string): HttpResult {
  const problem = problemResult(error, requestId);
  const { title, detail, errors } = JSON.parse(problem.body as string) as {
    title: string;
    detail: string;
    errors?: { path: string; message: string }[];
  };
  const page = errorPage(problem.statusCode ?? 500, title, detail, requestId, errors);
  return { ...page, headers: { ...problem.headers, ...page.headers } };
}

/** What an HTML route's stack adds: its errors as pages, its form POSTs' checks (page-form.ts). */
export const PAGE: PageParts = { render: problemPage, forms: pageForms };

/** `http` for an HTML route (`html: true`): the same stack with `PAGE`; only these routes' bundles hold the page code. */
export function pageHttp<R extends Route>(route: R, fn: (input: Input<NoInfer<R>>) => Promise<HttpResult>) {
  return counted(handlerWith(route, stackFor(route, PAGE), fn));
}
