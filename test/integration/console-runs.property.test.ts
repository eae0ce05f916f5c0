import fc from 'fast-check';
import { ulid } from 'ulid';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as runsList } from '../../functions/http/console/runs/list.ts';
import { putNew } from '../../shared/db/batch.ts';
import { executionKey, executionListings } from '../../shared/db/entities/execution.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { text, ulidish } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Whatever query a browser (or anyone) sends the runs list, and whatever cookie, the page answers 200,
 * a sign-in redirect or a 4xx page, never a 5xx: the filters, the page size, the cursor and the live
 * refresh's request in every shape. Through the whole console stack, on DynamoDB Local.
 */

/** A console handler called in-process (no contract check: console pages are not in the API's OpenAPI document). */
async function call(handler: typeof runsList, event: ReturnType<typeof apiEvent>) {
  const res = (await handler(event, lambdaContext())) as { statusCode: number; headers?: Record<string, string>; body?: string };
  return { status: res.statusCode, headers: res.headers ?? {}, body: res.body };
}

let token: string;
let workflowId: string;

beforeAll(async () => {
  const a = await givenAccount();
  token = await sessionOf(a.admin.email);
  workflowId = `wf_${ulid().toLowerCase()}`;
  const now = Date.now();
  const runs = ['SUCCEEDED', 'FAILED', 'RUNNING', 'WAITING_APPROVAL'].map((status, i) => ({
    executionId: `ex_${ulid(now - i * 60_000).toLowerCase()}`,
    status,
  }));
  await putNew(
    runs.map((r) => ({
      ...executionKey(a.account.accountId, r.executionId),
      ...executionListings({ accountId: a.account.accountId, workflowId, executionId: r.executionId }),
      type: 'execution',
      workflowId,
      status: r.status,
      trigger: 'api',
      recovery: false,
      variables: '{}',
      outputs: '{}',
      steps: [],
      nextStep: 0,
      startedAt: now,
      updatedAt: now,
      ...(r.status === 'FAILED' ? { finishedAt: now, error: { code: 'X', message: 'y' } } : {}),
    })),
  );
});

const iso = fc.date({ noInvalidDate: true, min: new Date(-1e13), max: new Date(4e14) }).map((d) => d.toISOString());
const value = (key: string) =>
  ({
    workflowId: fc.oneof(
      fc.constant(() => workflowId),
      ulidish.map((u) => () => `wf_${u}`),
      text.map((t) => () => t),
    ),
    status: fc.oneof(fc.constantFrom('FAILED', 'RUNNING', 'SUCCEEDED', 'failed', ''), text).map((v) => () => v),
    trigger: fc.oneof(fc.constantFrom('webhook', 'api', 'schedule', 'retry', 'rerun', 'cron', ''), text).map((v) => () => v),
    from: fc
      .oneof(
        iso,
        iso.map((s) => s.slice(0, 16)),
        iso.map((s) => s.slice(0, 10)),
        text,
      )
      .map((v) => () => v),
    to: fc
      .oneof(
        iso,
        iso.map((s) => s.slice(0, 19)),
        text,
      )
      .map((v) => () => v),
    limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), fc.constantFrom('1.5', 'NaN', '1e2', ''), text).map((v) => () => v),
    cursor: fc
      .oneof(
        text,
        fc.base64String().map((b) => `${b}.${b}`),
      )
      .map((v) => () => v),
    live: fc.oneof(fc.constantFrom('0', '1', ''), text).map((v) => () => v),
  })[key] as fc.Arbitrary<() => string>;

const KEYS = ['workflowId', 'status', 'trigger', 'from', 'to', 'limit', 'cursor', 'live'];
const queries = fc.oneof(
  fc
    .subarray(KEYS)
    .chain((keys) => fc.tuple(...keys.map((k) => value(k).map((v) => [k, v] as const))))
    .map((pairs) => () => Object.fromEntries(pairs.map(([k, v]) => [k, v()]))),
  fc.dictionary(text, text, { maxKeys: 4 }).map((d) => () => d),
);
const cookies = fc.oneof(
  { weight: 6, arbitrary: fc.constant(() => [`flowgate_session=${token}`]) },
  fc.constant(() => []),
  text.map((t) => () => [`flowgate_session=${t}`]),
);

describe('the runs list and the overview answer no request with a 5xx', () => {
  it('GET /console/runs with any query and cookie', { timeout: 120_000 }, async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(queries, cookies, fc.boolean(), async (query, cookie, live) => {
        const q = query();
        const event = {
          ...apiEvent({ method: 'GET', path: '/console/runs', query: q, headers: live ? { 'hx-request': 'true' } : {} }),
          cookies: cookie(),
        };
        const res = await call(runsList, event);
        const what = `${JSON.stringify(q).slice(0, 300)} -> ${res.status} ${res.body?.slice(0, 300)}`;
        expect([200, 303, 400, 404, 429], what).toContain(res.status);
        seen.add(res.status);
        if (res.status !== 303) expect(res.headers['content-type'], what).toBe('text/html; charset=utf-8');
      }),
      { numRuns: 150 },
    );
    // It looked: pages, refusals and sign-in redirects all came up.
    expect([...seen].sort()).toEqual(expect.arrayContaining([200, 303, 400]));
  });

  it('GET /console with any query and cookie', { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(queries, cookies, async (query, cookie) => {
        const q = query();
        const res = await call(overview, { ...apiEvent({ method: 'GET', path: '/console', query: q }), cookies: cookie() });
        expect([200, 303, 429], `${JSON.stringify(q).slice(0, 300)} -> ${res.status} ${res.body?.slice(0, 300)}`).toContain(res.status);
      }),
      { numRuns: 40 },
    );
  });
});
