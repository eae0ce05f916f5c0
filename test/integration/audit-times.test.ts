import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auditHandler } from '../../functions/http/audit/list.ts';
import { handler as auditPageHandler } from '../../functions/http/console/settings/audit/list.ts';
import { handler as auditExportHandler } from '../../functions/http/console/settings/audit/export.ts';
import { handler as runsPageHandler } from '../../functions/http/console/runs/list.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// The audit log's time filters (issue 41, finding 10): a time whose offset moves it past year 9999
// (or before year 0000) answered 500 (its ISO text sorts before every stored key), and an impossible
// date such as 2026-02-30 was read as another day. Both are refused with 400 at their field, by the
// API (JSON and NDJSON), the console's page and its export, and the runs list (the same schema).

const REFUSED: [Record<string, string>, string, RegExp][] = [
  [{ from: '2026-01-01', to: '9999-12-31T23:59:59-23:59' }, 'to', /out of range/],
  [{ to: '9999-12-31T23:59:59.999-00:01' }, 'to', /out of range/],
  [{ from: '0000-01-01T00:00:00+00:01' }, 'from', /out of range/],
  [{ from: '2026-02-30' }, 'from', /no day 30 in 2026-02/],
  [{ from: '2025-02-29T10:00Z' }, 'from', /no day 29/],
  [{ to: '2026-04-31T00:00:00Z' }, 'to', /no day 31/],
  [{ from: '2026-11-27T24:00' }, 'from', /no time 24:00/],
  [{ from: '2026-11-27T21:60' }, 'from', /no time/],
  [{ from: '2026-11-27T21:05:00+24:00' }, 'from', /no offset/],
  [{ to: '2026-00-10' }, 'to', /no month 00/],
];

describe('the audit time filters', () => {
  let admin: string;

  beforeAll(async () => {
    const a = await givenAccount();
    admin = await sessionOf(a.admin.email);
  });

  it('GET /api/audit refuses times past year 9999 with their offset, and impossible dates, at the field (JSON and NDJSON)', async () => {
    for (const [query, path, message] of REFUSED) {
      for (const accept of ['application/json', 'application/x-ndjson']) {
        const res = await invoke(auditHandler, apiEvent({ path: '/api/audit', headers: { ...bearer(admin), accept }, query }));
        expectProblem(res, 400, 'VALIDATION_FAILED');
        expect(res.json.errors, JSON.stringify(query)).toEqual([{ path, message: expect.stringMatching(message) }]);
      }
    }
  });

  it('takes the extremes that are times: year 0000 and 9999 in UTC, 29 February of a leap year, offsets up to ±23:59', async () => {
    for (const query of [
      { from: '0000-01-01T00:00:00Z', to: '9999-12-31T23:59:59.999Z' },
      { from: '2024-02-29', to: '9999-12-31T23:59:59+23:59' },
      { from: '0000-01-01T23:59-23:59', to: '2000-02-29T23:59:59.999999999Z' },
    ]) {
      const res = await invoke(auditHandler, apiEvent({ path: '/api/audit', headers: bearer(admin), query }));
      expect(res.status, `${JSON.stringify(query)} ${res.body}`).toBe(200);
    }
  });

  it('the console page shows the refusal at its field (400), and its export answers 400', async () => {
    for (const [query, path, message] of REFUSED) {
      const page = apiEvent({ path: '/console/audit', query });
      page.cookies = [`flowgate_session=${admin}`];
      const res = await invoke(auditPageHandler, page);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body).toContain(`id="audit-${path}-error"`);
      expect(res.body).toMatch(message);
      const exported = apiEvent({ path: '/console/audit/export', query });
      exported.cookies = [`flowgate_session=${admin}`];
      const ex = await invoke(auditExportHandler, exported);
      expect(ex.status, `${JSON.stringify(query)} ${ex.body?.slice(0, 200)}`).toBe(400);
      expect(ex.body).toMatch(message);
    }
  });

  it('the runs list refuses the same times (the shared schema)', async () => {
    for (const [query] of REFUSED.slice(0, 4)) {
      const page = apiEvent({ path: '/console/runs', query });
      page.cookies = [`flowgate_session=${admin}`];
      const res = await invoke(runsPageHandler, page);
      expect(res.status, `${JSON.stringify(query)} ${res.body?.slice(0, 200)}`).toBe(400);
    }
  });
});
