import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as decideHandler } from '../../functions/http/reviews/decide.ts';
import { handler as pageHandler } from '../../functions/http/reviews/page.ts';
import { handler as linkHandler } from '../../functions/http/approvals/link.ts';
import { handler as linkConfirmHandler } from '../../functions/http/approvals/link-confirm.ts';
import { pageFormValue } from '../../shared/http/page-form.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { reviewerLinks } from '../../shared/domain/review-links.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { anyUnits, b64, contentTypes, mutated, sourceIp, text } from '../support/properties.ts';

/**
 * Whatever reaches a reviewer's link (any token, path id, form body, content type), the page and its
 * POST answer an HTML page with a 2xx or 4xx, never a 5xx; no garbage decides anything.
 */

let stopWorkers: () => Promise<unknown>;
let approvalId: string;
let accountId: string;
let token: string;
let approveOnly: string;
let memberKey: string;
const ids: string[] = [];

beforeAll(async () => {
  await useOwnQueues();
  stopWorkers = startWorkers();
  const a = await givenAccount();
  accountId = a.account.accountId;
  const definition = WorkflowDefinition.parse({
    steps: [
      {
        id: 'approve',
        type: 'manual_approval',
        title: 'Pay?',
        reviewers: [`user:${a.member.userId}`],
        form: [
          { name: 'amount', type: 'number', required: true, default: 1 },
          { name: 'ok', type: 'boolean', required: false },
        ],
      },
    ],
  });
  const workflow = await createWorkflow(
    { accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'no-5xx review links', definition, recovery: false, editors: [] },
  );
  const runs = await Promise.all([0, 1].map(() => startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId })));
  for (const { execution } of runs) {
    const run = await eventually(
      () => getExecution(accountId, execution.executionId),
      (e) => e?.status === 'WAITING_APPROVAL',
      30_000,
    );
    ids.push(run?.approvalId as string);
  }
  approvalId = ids[0] as string;
  const links = await reviewerLinks({ accountId, approvalId, userId: a.member.userId, channel: 'email' });
  token = new URL(links.reject).searchParams.get('token') as string;
  approveOnly = new URL(links.approve).searchParams.get('token') as string;
  memberKey = a.memberKey.token;
}, 60_000);
afterAll(() => stopWorkers?.());

const tokens = () =>
  fc.option(
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(token) },
      fc.constant(approveOnly),
      { weight: 3, arbitrary: mutated(token) },
      text,
      fc.string({ maxLength: 5000 }),
      fc.jsonValue().map((v) => `${Buffer.from(JSON.stringify(v)).toString('base64url')}.${token.split('.')[1]}`),
    ),
    { nil: undefined, freq: 10 },
  );
const paramsOf = () =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(approvalId) }, fc.constantFrom(...ids, 'ap_00000000000000000000000000'), text, anyUnits());
const forms = fc.oneof(
  fc.constant(undefined),
  fc
    .record(
      {
        decision: fc.oneof(fc.constantFrom('approve', 'reject', 'APPROVE', ''), text),
        comment: fc.oneof(text, fc.string({ maxLength: 3000 })),
        'field.amount': fc.oneof(fc.constantFrom('1', '-2.5', 'NaN', '1e400', '', 'x'), text),
        'field.ok': fc.oneof(fc.constantFrom('true', 'false', 'on'), text),
        // The page's value (page-form.ts): the real one now and then, a changed one, garbage.
        page: fc.oneof(
          fc.constant(null).map(() => pageFormValue(token, `/api/reviews/${approvalId}`)),
          fc.constant(null).chain(() => mutated(pageFormValue(token, `/api/reviews/${approvalId}`))),
          text,
        ),
      },
      { requiredKeys: [] },
    )
    .map((f) => new URLSearchParams(f as Record<string, string>).toString()),
  text,
  fc.uint8Array({ maxLength: 400 }).map((u) => b64(u)),
);

/** Where a request says it comes from: nothing, our own page, another site (Fetch Metadata, Origin), garbage. */
const siteHeaders = fc.oneof(
  fc.constant({}),
  fc.record(
    {
      'sec-fetch-site': fc.oneof(fc.constantFrom('same-origin', 'none', 'cross-site', 'same-site', ''), text),
      origin: fc.oneof(fc.constantFrom('https://evil.example', 'null', 'http://flowgate.test', ''), text),
    },
    { requiredKeys: [] },
  ),
);

describe('no request to a reviewer’s link answers 5xx', () => {
  it('GET and POST /api/reviews/{approvalId}', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'POST'),
          token: tokens(),
          id: paramsOf(),
          body: forms,
          base64: fc.boolean(),
          type: contentTypes({ refusedWeight: 1, moreRefused: ['application/x-www-form-urlencoded; charset=utf-8'] }),
          ip: sourceIp,
          site: siteHeaders,
        }),
        async (r) => {
          // Mostly forms: a form's content type and an approve decision now and then.
          const headers: Record<string, string> = { ...(r.type === undefined ? {} : { 'content-type': r.type }), ...r.site };
          const res = await invoke(
            r.method === 'GET' ? pageHandler : decideHandler,
            apiEvent({
              method: r.method,
              path: `/api/reviews/${approvalId}`,
              params: { approvalId: r.id },
              ...(r.token !== undefined ? { query: { token: r.token } } : {}),
              headers,
              ...(r.body !== undefined ? { body: r.base64 ? b64(r.body) : r.body } : {}),
              isBase64Encoded: r.base64,
              sourceIp: r.ip,
            }),
          );
          const what = `${r.method} ${r.id} ${String(r.token).slice(0, 80)} ${String(r.body).slice(0, 200)} -> ${res.status} ${res.body?.slice(0, 300)}`;
          expect(res.status, what).toBeLessThan(500);
          expect([200, 400, 403, 404, 409, 410, 413, 415], what).toContain(res.status);
          expect(res.headers['content-type'], what).toMatch(/^text\/html/);
          seen.add(`${r.method} ${res.status}`);
        },
      ),
      { numRuns: 250 },
    );
    expect(seen.has('GET 200')).toBe(true);
    expect(seen.has('GET 403')).toBe(true);
    // Whatever was decided came only from the link's own token: its reviewer, by email.
    const approval = await getApproval(accountId, approvalId);
    if (approval?.status !== 'PENDING') expect(approval).toMatchObject({ decision: expect.stringMatching(/^(approve|reject)$/) });
  });
});

describe('no request to a one-click link answers 5xx', () => {
  it('GET and POST /api/webhook-trigger/approval/{approvalId}/{decision}', async () => {
    const seen = new Set<string>();
    const other = ids[1] as string;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('GET', 'POST', 'POST'),
          id: fc.oneof({ weight: 4, arbitrary: fc.constant(other) }, text, anyUnits()),
          decision: fc.oneof(fc.constantFrom('approve', 'reject', 'maybe'), text),
          key: fc.oneof({ weight: 4, arbitrary: fc.constant(memberKey) }, mutated(memberKey), text),
          confirm: fc.option(fc.constantFrom('1', '0', 'true'), { nil: undefined }),
          page: fc.option(
            fc.oneof(
              {
                weight: 3,
                arbitrary: fc.constant(null).map(() => pageFormValue(memberKey, `/api/webhook-trigger/approval/${other}/approve`)),
              },
              fc.constant(null).chain(() => mutated(pageFormValue(memberKey, `/api/webhook-trigger/approval/${other}/approve`))),
              text,
            ),
            { nil: undefined },
          ),
          site: siteHeaders,
          ip: sourceIp,
        }),
        async (r) => {
          const body = r.page === undefined ? '' : new URLSearchParams({ page: r.page }).toString();
          const res = await invoke(
            r.method === 'GET' ? linkHandler : linkConfirmHandler,
            apiEvent({
              method: r.method,
              path: `/api/webhook-trigger/approval/${other}/approve`,
              params: { approvalId: r.id, decision: r.decision },
              query: { api_key: r.key, ...(r.confirm ? { confirm: r.confirm } : {}) },
              headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'Slackbot 1.0', ...r.site },
              ...(r.method === 'POST' ? { body } : {}),
              sourceIp: r.ip,
            }),
          );
          const what = `${r.method} ${JSON.stringify(r).slice(0, 300)} -> ${res.status} ${res.body?.slice(0, 300)}`;
          expect([200, 400, 401, 403, 404, 409, 413, 429], what).toContain(res.status);
          expect(res.headers['content-type'], what).toMatch(/^text\/html/);
          seen.add(`${r.method} ${res.status}`);
        },
      ),
      { numRuns: 150 },
    );
    // Some went through (the page, or a decision by the page's value), some were refused.
    expect(
      [...seen].some((x) => x.endsWith(' 200')),
      [...seen].join(', '),
    ).toBe(true);
    expect(seen.has('POST 403'), [...seen].join(', ')).toBe(true);
  });
});
