import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auditHandler } from '../../functions/http/audit/list.ts';
import { handler as auditPageHandler } from '../../functions/http/console/audit.ts';
import { handler as auditExportHandler } from '../../functions/http/console/audit-export.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { check, good, mutated, request, runsWith, text, tokenBody } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Whatever a client asks `GET /api/audit` (and the console's audit page and export) — filters,
 * cursors, limits, Accept headers, credentials — the answer is a 2xx or a 4xx, never a 5xx; and an
 * answer never holds another account's entry. Real emulators, whole middleware stack.
 */

const RUNS = { numRuns: 100 } as const;
const iso = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
const value = fc.oneof(
  text,
  iso,
  fc.constantFrom('', 'key.created', 'webhook', 'usr_01jzzzzzzzzzzzzzzzzzzzzzzz', '2026-11-27', '2026-13-45T99:99Z', 'x'.repeat(5000)),
  fc.integer().map(String),
);
const filterQuery = fc.dictionary(
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('actor', 'action', 'objectType', 'objectId', 'from', 'to', 'limit', 'cursor') },
    fc.string(),
  ),
  value,
  { maxKeys: 6 },
);

describe('no request makes the audit log answer 5xx', () => {
  let admin: string;
  let member: string;
  let accountId: string;

  beforeAll(async () => {
    const a = await givenAccount();
    accountId = a.account.accountId;
    [admin, member] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
  });

  const auth = () =>
    fc.option(
      fc.oneof(
        { weight: 10, arbitrary: fc.constantFrom(`Bearer ${admin}`, `Bearer ${member}`) },
        text,
        tokenBody.map((t) => `Bearer dys_${t}`),
        mutated(admin).map((t) => `Bearer ${t}`),
      ),
      { nil: undefined, freq: 8 },
    );
  const accept = fc.record({
    accept: fc.constantFrom('application/json', 'application/x-ndjson', '*/*', 'text/html', 'application/x-ndjson, application/json'),
  });

  it('GET /api/audit', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(
        request(auth(), fc.constant({ isBase64Encoded: false }), {
          query: fc.option(filterQuery, { nil: undefined }),
          extraHeaders: accept,
        }),
        async (req) => {
          const res = await check(auditHandler, 'GET', '/api/audit', req, [200, 400, 401, 403, 429]);
          if (res.status !== 200) return;
          answered++;
          const items =
            res.headers['content-type'] === 'application/x-ndjson'
              ? (res.body ?? '')
                  .split('\n')
                  .filter(Boolean)
                  .map((l) => JSON.parse(l))
              : res.json.items;
          for (const e of items) if (!e.truncated) expect(e.accountId).toBe(accountId);
        },
      ),
      runsWith(RUNS, good(`Bearer ${admin}`), good(`Bearer ${member}`, { query: { action: 'session.signed_in' } })),
    );
    expect(answered).toBeGreaterThan(0);
  });

  it('GET /console/audit and /console/audit/export', async () => {
    let pages = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          query: fc.option(filterQuery, { nil: undefined }),
          cookie: fc.oneof(
            fc.constantFrom(`flowgate_session=${admin}`, `flowgate_session=${member}`),
            text.map((t) => `flowgate_session=${t}`),
          ),
          exported: fc.boolean(),
        }),
        async ({ query, cookie, exported }) => {
          const path = exported ? '/console/audit/export' : '/console/audit';
          const event = apiEvent({ path, ...(query ? { query } : {}) });
          // As API Gateway gives a browser's cookies.
          event.cookies = [cookie];
          const res = await invoke(exported ? auditExportHandler : auditPageHandler, event);
          expect(res.status, `${path} ${JSON.stringify(query)} -> ${res.status} ${res.body?.slice(0, 300)}`).toBeLessThan(500);
          expect([200, 303, 400, 403, 429]).toContain(res.status);
          if (res.status === 200) pages++;
        },
      ),
      RUNS,
    );
    expect(pages).toBeGreaterThan(0);
  });
});
