import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auditHandler } from '../../functions/http/audit/list.ts';
import { handler as auditPageHandler } from '../../functions/http/console/settings/audit/list.ts';
import { handler as auditExportHandler } from '../../functions/http/console/settings/audit/export.ts';
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
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/**
 * ISO-shaped times at the edges (issue 41, finding 10): years 0000 and 9999 with offsets up to ±23:59
 * and beyond (moving the time out of the four-digit years), impossible days (2026-02-30, a 29 February
 * of a common year), hours, minutes and seconds out of range, with and without fractions and zones.
 */
const edgeTime = fc
  .record({
    year: fc.oneof(fc.constantFrom(0, 1, 1969, 1970, 2024, 2025, 2026, 9998, 9999), fc.integer({ min: 0, max: 9999 })),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.oneof(fc.constantFrom(0, 28, 29, 30, 31, 32), fc.integer({ min: 1, max: 28 })),
    time: fc.option(
      fc.record({
        hour: fc.oneof(fc.constantFrom(0, 23, 24, 99), fc.integer({ min: 0, max: 23 })),
        minute: fc.oneof(fc.constantFrom(0, 59, 60), fc.integer({ min: 0, max: 59 })),
        second: fc.option(fc.oneof(fc.constantFrom(0, 59, 60), fc.integer({ min: 0, max: 59 }))),
        fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/)),
      }),
    ),
    zone: fc.option(
      fc.oneof(
        fc.constant('Z'),
        fc
          .record({ sign: fc.constantFrom('+', '-'), hours: fc.integer({ min: 0, max: 25 }), minutes: fc.constantFrom(0, 1, 30, 59, 60) })
          .map(({ sign, hours, minutes }) => `${sign}${pad(hours)}:${pad(minutes)}`),
      ),
    ),
  })
  .map(({ year, month, day, time, zone }) => {
    const t = time
      ? `T${pad(time.hour)}:${pad(time.minute)}${time.second === null ? '' : `:${pad(time.second)}${time.fraction === null ? '' : `.${time.fraction}`}`}`
      : '';
    return `${pad(year, 4)}-${pad(month)}-${pad(day)}${t}${time ? (zone ?? '') : ''}`;
  });
const clock = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${pad(h)}:${pad(m)}`);
/** The last day of year 9999 with a negative offset, and the first of year 0000 with a positive one: often past the edge. */
const beyond = fc.oneof(
  fc.tuple(clock, clock).map(([t, o]) => `9999-12-31T${t}:59-${o}`),
  fc.tuple(clock, clock).map(([t, o]) => `0000-01-01T${t}+${o}`),
);
const value = fc.oneof(
  text,
  iso,
  edgeTime,
  beyond,
  fc.constantFrom(
    '',
    'key.created',
    'webhook',
    'usr_01jzzzzzzzzzzzzzzzzzzzzzzz',
    '2026-11-27',
    '2026-13-45T99:99Z',
    '2026-02-30',
    '9999-12-31T23:59:59-23:59',
    '0000-01-01T00:00:00+23:59',
    'x'.repeat(5000),
  ),
  fc.integer().map(String),
);
/** A time range, the ends at the edges or past them: the query's from/to as a pair. */
const edgeRange = fc.record({ from: fc.oneof(iso, edgeTime, beyond), to: fc.oneof(iso, edgeTime, beyond) });
const filterQuery = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.dictionary(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('actor', 'action', 'objectType', 'objectId', 'from', 'to', 'limit', 'cursor') },
        fc.string(),
      ),
      value,
      { maxKeys: 6 },
    ),
  },
  { weight: 1, arbitrary: edgeRange },
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
