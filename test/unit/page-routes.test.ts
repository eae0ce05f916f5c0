import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { http } from '../../shared/http/handler.ts';
import { pageHttp } from '../../shared/http/page-handler.ts';
import { readFileSync } from 'node:fs';

// The HTML routes' parts (their error pages, their form POSTs' checks) live in page-handler.ts, which
// only those routes' handlers import: every other route's bundle is without them.

const htmlRoutes = routes.filter((r) => 'html' in r && r.html);

describe('HTML routes', () => {
  it('are served by pageHttp: `http` refuses one at the cold start, naming it', () => {
    expect(htmlRoutes.length).toBeGreaterThan(0);
    for (const r of htmlRoutes) expect(() => http(r, async () => ({ statusCode: 200 }))).toThrow(`${r.method} ${r.path} is an HTML route`);
    for (const r of htmlRoutes) expect(typeof pageHttp(r, async () => ({ statusCode: 200 }))).toBe('function');
  });

  it('each handler module of an HTML route uses pageHttp, and no other does', () => {
    for (const r of routes) {
      const source = readFileSync(`functions/${r.handler}.ts`, 'utf8');
      expect(source.includes('pageHttp('), r.handler).toBe(htmlRoutes.includes(r));
    }
  });
});
