import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { CONSOLE_FUNCTIONS } from '../../functions/route-kinds.ts';
import { consoleRouter } from '../../functions/http/console/router.ts';
import { type ConsolePage, consoleHttp } from '../../shared/console/console-http.tsx';
import { isConsolePage, type Route, routeKey } from '../../shared/http/route.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';

/**
 * The console as one application (issue 43): its pages in section folders, each a route entry, a
 * loader and a view; three functions, each a router over the pages whose routes name it.
 */

const ROOT = join(import.meta.dirname, '../..');
const CONSOLE = 'functions/http/console';
const pages = (routes as readonly Route[]).filter(isConsolePage);

/** Each console function's pages, as its module lists them (imported, as Lambda imports it). */
const listed = async (fn: string) => {
  const source = readFileSync(join(ROOT, `functions/${fn}.ts`), 'utf8');
  return [...source.matchAll(/import \{ handler as \w+ \} from '\.\/([\w/-]+)\.ts';/g)].map((m) => m[1] as string);
};

describe('the console functions', () => {
  it.each(Object.values(CONSOLE_FUNCTIONS))('%s serves exactly the pages whose routes name it', async (fn) => {
    const named = pages
      .filter((r) => r.handler === fn)
      .map(routeKey)
      .sort();
    expect(named.length).toBeGreaterThan(0);
    const served = await Promise.all(
      (await listed(fn)).map(
        async (m) => ((await import(/* @vite-ignore */ join(ROOT, CONSOLE, `${m}.ts`))) as { handler: ConsolePage }).handler.route,
      ),
    );
    expect(served.map(routeKey).sort()).toEqual(named);
    // The route a page carries is the one of the table (the same module).
    for (const r of served) expect(pages).toContain(r);
  });

  it("every console route names one of the three, and every page's handler is a page of one of them", () => {
    for (const r of pages) expect(Object.values(CONSOLE_FUNCTIONS), routeKey(r)).toContain(r.handler);
    for (const r of routes as readonly Route[]) if (!isConsolePage(r)) expect(Object.values(CONSOLE_FUNCTIONS)).not.toContain(r.handler);
  });

  it('keeps each page beside its route entry, in a section folder (or the console root for /console)', () => {
    const entries = readdirSync(join(ROOT, CONSOLE), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.route.ts'));
    expect(entries).toHaveLength(pages.length);
    for (const entry of entries) {
      const loader = readFileSync(join(ROOT, CONSOLE, entry.replace(/\.route\.ts$/, '.ts')), 'utf8');
      expect(loader, entry).toContain(`import { route } from './${entry.split('/').pop()}';`);
      expect(loader, entry).toContain('consoleHttp(route,');
      if (entry !== 'overview.route.ts') expect(entry, entry).toContain('/');
    }
  });
});

describe('the console router', () => {
  const page = (path: string, method: 'GET' | 'POST' = 'GET'): ConsolePage =>
    consoleHttp(
      { method, path, handler: CONSOLE_FUNCTIONS.read, summary: path, tag: 't', auth: { kind: 'none' }, grants: [], html: true },
      async ({ event }) => ({
        statusCode: 200,
        headers: { 'content-type': 'text/plain' },
        body: `${method} ${path} ${JSON.stringify(event.pathParameters ?? {})}`,
      }),
    );
  const router = consoleRouter([page('/console/x/new'), page('/console/x/{id}'), page('/console/x/{id}', 'POST')]);
  const call = async (event: ReturnType<typeof apiEvent>) => (await router(event, lambdaContext())) as { statusCode: number; body: string };

  it("serves the page of the event's route key (as API Gateway names it)", async () => {
    const event = { ...apiEvent({ path: '/console/x/new', params: { id: 'new' } }), routeKey: 'GET /console/x/{id}' };
    expect((await call(event)).body).toBe('GET /console/x/{id} {"id":"new"}');
  });

  it('without a known route key, matches method and path as API Gateway does: the most literal segments first', async () => {
    expect((await call(apiEvent({ path: '/console/x/new' }))).body).toBe('GET /console/x/new {}');
    expect((await call(apiEvent({ path: '/console/x/abc' }))).body).toBe('GET /console/x/{id} {"id":"abc"}');
    expect((await call(apiEvent({ method: 'POST', path: '/console/x/abc' }))).body).toBe('POST /console/x/{id} {"id":"abc"}');
  });

  it('answers a path none of its pages serves with a 404 page, never a 5xx', async () => {
    const res = await call(apiEvent({ path: '/console/y' }));
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('No console page GET /console/y');
    expect((res as { headers?: Record<string, string> }).headers?.['x-request-id']).toEqual(expect.any(String));
  });

  it('refuses two pages of one route key at its cold start', () => {
    expect(() => consoleRouter([page('/console/x'), page('/console/x')])).toThrow('GET /console/x: two pages in one console function');
  });
});
