import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { b64, sourceIp, text, ulidish } from '../support/properties.ts';

/**
 * Whatever a browser (or anything else) sends to a console page — paths, query strings, form bodies,
 * cookies, Fetch Metadata — the answer is a page, a redirect or an asset, never a 5xx. Every console
 * route of the route table, in-process through its whole stack, against the real emulators.
 */

type Handler = (e: ReturnType<typeof apiEvent>, c: never) => Promise<{ statusCode: number; headers?: Record<string, string> }>;
const pages = (routes as readonly Route[]).filter(isConsolePage);
const handlers = new Map<Route, Handler>();

let session: string;
let otherSession: string;
let adminEmail: string;

beforeAll(async () => {
  const [account, other] = await Promise.all([givenAccount(), givenAccount()]);
  adminEmail = account.admin.email;
  otherSession = await sessionOf(other.member.email);
  for (const r of pages)
    handlers.set(r, (await import(/* @vite-ignore */ new URL(`../../functions/${r.handler}.ts`, import.meta.url).href)).handler as Handler);
});

const cookieName = 'flowgate_session';
const cookies = () =>
  fc.option(
    fc.oneof(
      fc.constant(`${cookieName}=${session}`),
      fc.constant(`${cookieName}=${otherSession}`),
      text.map((t) => `${cookieName}=${t}`),
      ulidish.map((u) => `${cookieName}=dys_${u}_${'A'.repeat(49)}`),
      text,
    ),
    { nil: undefined },
  );

const formBodies = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 20 }), fc.string({ maxLength: 200 }), { maxKeys: 6 }).map((d) => new URLSearchParams(d).toString()),
  fc
    .record({
      csrf: fc.constantFrom('valid', 'other', 'junk'),
      extra: fc.dictionary(
        fc.constantFrom(
          'decision',
          'comment',
          'email',
          'password',
          'next',
          'action',
          'field.x',
          'approvalId',
          'approve',
          'reject',
          'sort',
          'all',
        ),
        fc.oneof(
          text,
          ulidish.map((u) => `ap_${u}`),
          fc.constantFrom('approve', 'reject', 'deadline', '1'),
        ),
        { maxKeys: 4 },
      ),
    })
    .map(({ csrf, extra }) =>
      new URLSearchParams({
        ...extra,
        csrf: csrf === 'valid' ? csrfToken(session) : csrf === 'other' ? csrfToken(otherSession) : 'x',
      }).toString(),
    ),
  text,
);

/** A path segment as a browser sends it (a lone surrogate cannot be sent: it is replaced). */
const encoded = (s: string) => encodeURIComponent(s.toWellFormed());

const requests = (r: Route) =>
  fc.record({
    params: fc.dictionary(
      fc.constantFrom(...(r.path.match(/\{(\w+)\}/g) ?? ['{none}']).map((p) => p.slice(1, -1))),
      fc.oneof(ulidish, text),
      {
        minKeys: 0,
        maxKeys: 3,
      },
    ),
    query: fc.option(
      fc.dictionary(
        fc.oneof(
          fc.constantFrom(
            'next',
            'cursor',
            'status',
            'workflowId',
            'trigger',
            'from',
            'to',
            'all',
            'live',
            'sort',
            'done',
            'approved',
            'handled',
          ),
          fc.string(),
        ),
        fc.oneof(text, fc.constantFrom('deadline', 'oldest', '1', '2', '999', '1000')),
        { maxKeys: 5 },
      ),
      {
        nil: undefined,
      },
    ),
    cookie: cookies(),
    body: fc.option(formBodies, { nil: undefined }),
    base64: fc.boolean(),
    contentType: fc.option(
      fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x'),
      { nil: undefined },
    ),
    site: fc.option(fc.constantFrom('same-origin', 'cross-site', 'same-site', 'none', 'junk'), { nil: undefined }),
    origin: fc.option(fc.constantFrom('https://evil.example', 'null', 'http://test.local', 'not a url'), { nil: undefined }),
    sourceIp,
  });

describe('no request makes a console page answer 5xx', () => {
  for (const r of pages) {
    it(`${r.method} ${r.path}`, async () => {
      const handler = handlers.get(r) as Handler;
      // A session of its own: a valid sign-out of an earlier route's runs ends the session it used.
      session = await sessionOf(adminEmail);
      await fc.assert(
        fc.asyncProperty(requests(r), async (q) => {
          const headers: Record<string, string> = {};
          if (q.contentType) headers['content-type'] = q.contentType;
          if (q.site) headers['sec-fetch-site'] = q.site;
          if (q.origin) headers.origin = q.origin;
          const event = apiEvent({
            method: r.method,
            path: r.path.replace(/\{(\w+)\}/g, (_, k: string) => encoded(q.params[k] ?? 'x')),
            headers,
            params: q.params,
            ...(q.query ? { query: q.query } : {}),
            ...(q.body !== undefined && r.method === 'POST' ? { body: q.base64 ? b64(q.body) : q.body, isBase64Encoded: q.base64 } : {}),
            sourceIp: q.sourceIp,
          });
          if (q.cookie) event.cookies = [q.cookie];
          // The page's console function, given the route key API Gateway matched (its router serves that page).
          event.routeKey = `${r.method} ${r.path}`;
          const res = await handler(event, lambdaContext());
          const what = `${r.method} ${r.path} ${JSON.stringify(q).slice(0, 400)} -> ${res.statusCode}`;
          expect(res.statusCode, what).toBeLessThan(500);
          expect(res.headers?.['x-request-id'], what).toEqual(expect.any(String));
          if (res.statusCode >= 400) expect(res.headers?.['content-type'], what).toBe('text/html; charset=utf-8');
        }),
        { numRuns: 60 },
      );
    });
  }
});
