import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { http } from '../../shared/http/handler.ts';
import { pageHttp } from '../../shared/http/page-handler.ts';
import { readFileSync } from 'node:fs';
import { isConsolePage, type Route } from '../../shared/http/route.ts';

// The HTML routes' parts (their error pages, their form POSTs' checks) live in page-handler.ts, which
// only those routes' handlers import: every other route's bundle is without them.

// The console's pages are HTML routes served by consoleHttp (shared/console/), with their own stack.
const htmlRoutes = routes.filter((r) => 'html' in r && r.html && !isConsolePage(r));
const consolePages = (routes as readonly Route[]).filter((r) => isConsolePage(r));

describe('HTML routes', () => {
  it('are served by pageHttp: `http` refuses one at the cold start, naming it', () => {
    expect(htmlRoutes.length).toBeGreaterThan(0);
    for (const r of htmlRoutes) expect(() => http(r, async () => ({ statusCode: 200 }))).toThrow(`${r.method} ${r.path} is an HTML route`);
    for (const r of htmlRoutes) expect(typeof pageHttp(r, async () => ({ statusCode: 200 }))).toBe('function');
  });

  it('each handler module of an HTML route uses pageHttp, and no other does; the console functions route to consoleHttp pages', () => {
    for (const r of routes) {
      const source = readFileSync(`functions/${r.handler}.ts`, 'utf8');
      expect(source.includes('pageHttp('), r.handler).toBe(htmlRoutes.includes(r));
      // A console page's function is a router over its pages, each served by consoleHttp (test/unit/console-app.test.ts).
      expect(source.includes('consoleRouter('), r.handler).toBe(consolePages.includes(r));
    }
  });

  it("the console's pages are HTML routes under /console (and GET /), signed in by the session cookie or not at all", () => {
    expect(consolePages.length).toBeGreaterThan(0);
    for (const r of consolePages) {
      expect(r.html, r.path).toBe(true);
      expect(['console', 'none'], r.path).toContain(r.auth.kind);
    }
    // And nothing else takes the cookie.
    for (const r of routes as readonly Route[]) if (!isConsolePage(r)) expect(r.auth.kind, r.path).not.toBe('console');
  });
});
