// The console's one in-process router: each of the console's functions (read.ts, change.ts, secrets.ts)
// is a list of pages served by it. API Gateway keeps one route per page (its route key, its throttle)
// and names the matched key in the event, so a page is found by that key in a Map, with no matching;
// an event without a known key (a handler called in-process) is matched by method and path as API
// Gateway matches (the template with the most literal segments first).
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { errorPage, type ConsolePage } from '../../../shared/console/console-http.tsx';
import { notFound } from '../../../shared/errors.ts';
import type { HttpEvent, HttpResult } from '../../../shared/http/context.ts';
import { matchPath } from '../../../shared/http/match.ts';
import { routeKey } from '../../../shared/http/route.ts';

const literalSegments = (path: string) => path.split('/').filter((s) => !s.startsWith('{')).length;

/** The handler of a console function: the page of the event's route key (or method and path), or a 404 page. */
export function consoleRouter(pages: readonly ConsolePage[]) {
  const byKey = new Map<string, ConsolePage>();
  for (const page of pages) {
    const key = routeKey(page.route);
    if (byKey.has(key)) throw new Error(`${key}: two pages in one console function`);
    byKey.set(key, page);
  }
  const byPath = [...pages].sort((a, b) => literalSegments(b.route.path) - literalSegments(a.route.path));
  return async (event: HttpEvent, context: Context): Promise<HttpResult> => {
    const page = byKey.get(event.routeKey);
    if (page) return page(event, context);
    const method = event.requestContext.http.method;
    for (const candidate of byPath) {
      if (candidate.route.method !== method) continue;
      const params = matchPath(candidate.route.path, event.rawPath);
      if (params)
        return candidate(Object.keys(params).length ? { ...event, pathParameters: event.pathParameters ?? params } : event, context);
    }
    const requestId = event.requestContext.requestId || randomUUID();
    const res = errorPage(notFound('NOT_FOUND', `No console page ${method} ${event.rawPath.slice(0, 200)}.`), requestId);
    return { ...res, headers: { ...res.headers, 'x-request-id': requestId } };
  };
}
