import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { db, tableName } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { type Approval, approvalKey, getApproval } from '../../shared/db/entities/approval.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { expireApproval, expireDueApprovals } from '../../shared/domain/expiry.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { pageFormValue } from '../../shared/http/page-form.ts';
import { eventually } from '../support/engine.ts';
import { expectProblem, readResponse } from '../support/http.ts';
import { expectRateLimitedHeaders } from '../support/rate-limit.ts';
import { givenAccount } from '../support/fixtures.ts';

/**
 * Approvals over real HTTP on the local stack (server, pollers, workers, emulators), with real runs
 * stopped at manual_approval steps: the spec's approval POST (its error table in the order of docs/approvals-and-channels.md), the
 * one-click link (confirmation page, confirm by form POST, preview bots, headers, HTML errors,
 * escaping), the v1 approvals endpoints (list, detail, form validation), the audit history of every
 * decision and refused attempt, and approval deadlines.
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('approvals'));
});
afterAll(() => stack?.stop());

const DECIDE = '/api/webhook-trigger/approval';
const UNKNOWN_ID = 'ap_00000000000000000000000000';
const KIB64 = 64 * 1024;
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const PREVIEW_BOTS = [
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  'WhatsApp/2.21.12.21 A',
  'TelegramBot (like TwitterBot)',
  'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.4266; Pro)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
];
const XSS = '<script>alert(1)</script>';

type Account = Awaited<ReturnType<typeof givenAccount>>;
type Res = { status: number; headers: Headers; text: string; json: any };

async function call(
  path: string,
  init: { method?: string; body?: string | Buffer; json?: unknown; headers?: Record<string, string>; key?: string } = {},
): Promise<Res> {
  const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
  const res = await fetch(`${stack.url}${path}`, {
    method: init.method ?? (body !== undefined ? 'POST' : 'GET'),
    redirect: 'manual',
    headers: {
      ...(init.key !== undefined ? { authorization: `Bearer ${init.key}` } : {}),
      ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : new Uint8Array(body),
  });
  return readResponse(res);
}

/** The spec's POST decision endpoint. */
const post = (json: unknown, key?: string, headers: Record<string, string> = {}) => call(DECIDE, { json, key, headers });

/** The one-click link: `/api/webhook-trigger/approval/{id}/{decision}?api_key=...&...`. */
function linkPath(approvalId: string, decision: string, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  return `${DECIDE}/${encodeURIComponent(approvalId)}/${decision}${qs ? `?${qs}` : ''}`;
}
const link = (
  approvalId: string,
  decision: string,
  query: Record<string, string>,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) =>
  call(linkPath(approvalId, decision, query), {
    method: init.method ?? 'GET',
    headers: { 'user-agent': BROWSER, ...init.headers },
    body: init.body,
  });

const v1 = (path: string, key: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) =>
  call(`/api/v1${path}`, { ...init, key });

/** Headers every one-click page carries (docs/approvals-and-channels.md "Approvals"). */
function expectPageHeaders(headers: Headers) {
  expect(headers.get('content-type')).toMatch(/^text\/html/);
  expect(headers.get('cache-control')).toBe('no-store');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('x-robots-tag')).toMatch(/noindex/);
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  const csp = headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("form-action 'self'");
}

/** An HTML page with the right status and headers, never the raw script. */
function expectPage(res: Res, status: number) {
  expect(res.status, res.text).toBe(status);
  expectPageHeaders(res.headers);
  expect(res.text).toMatch(/^<!doctype html>/i);
  expect(res.text).not.toContain('<script');
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

const decodeEntities = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCharCode(Number.parseInt(n, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The confirmation page: one `<form method="post">` to the same path and query with confirm=1, no link to it. */
function expectConfirmationPage(res: Res, approvalId: string, decision: 'approve' | 'reject', apiKey: string) {
  expectPage(res, 200);
  const forms = [...res.text.matchAll(/<form\b[^>]*>/gi)].map((m) => m[0]);
  expect(forms).toHaveLength(1);
  const form = forms[0] as string;
  expect(form).toMatch(/method="post"/i);
  const action = decodeEntities(/action="([^"]*)"/i.exec(form)?.[1] ?? '');
  const url = new URL(action, stack.url);
  expect(url.origin).toBe(stack.url);
  expect(url.pathname).toBe(`${DECIDE}/${approvalId}/${decision}`);
  expect(url.searchParams.get('confirm')).toBe('1');
  expect(url.searchParams.get('api_key')).toBe(apiKey);
  expect(res.text).not.toMatch(/<a\b[^>]*href/i);
  expect(res.text).not.toMatch(/https?:\/\/[^"' ]*confirm/i);
  return url;
}

/** The confirmation page's hidden per-page value (shared/http/page-form.ts), which its form posts back. */
const hiddenOf = (res: Res) => /<input type="hidden" name="page" value="([^"]+)"\/?>/.exec(res.text)?.[1] as string;
/** The form body a page for this key and link would post, as if the page had been opened before. */
const pageForm = (key: string, approvalId: string, decision: string) =>
  new URLSearchParams({ page: pageFormValue(key, `${DECIDE}/${approvalId}/${decision}`) }).toString();

type Step = Record<string, unknown>;

/** A workflow whose first step is the given manual_approval step (then a set step), of `a`'s admin. */
async function givenWorkflow(a: Account, step: Step = {}, variables: Record<string, unknown> = {}) {
  const definition = WorkflowDefinition.parse({
    variables,
    steps: [
      { id: 'approve', type: 'manual_approval', title: 'Ship it', reviewers: ['role:admin'], ...step },
      { id: 'after', type: 'set', values: { after: "{% 'done by ' & $steps.approve.decidedBy %}" } },
    ],
  });
  return createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'Release train', definition, recovery: false, editors: [] },
  );
}

const readRun = async (e: Pick<Execution, 'accountId' | 'executionId'>) => (await getExecution(e.accountId, e.executionId)) as Execution;
const readApproval = async (g: Given) => (await getApproval(g.accountId, g.approvalId)) as Approval;
const eventTypes = async (e: Pick<Execution, 'accountId' | 'executionId'>) =>
  (await listEvents(e.accountId, e.executionId, 200)).items.map((ev) => ev.type);

type Given = { accountId: string; executionId: string; approvalId: string; workflowId: string; approval: Approval; run: Execution };

/** A real run of a workflow, stopped at its manual_approval step with a PENDING approval. */
async function givenApproval(
  a: Account,
  step: Step = {},
  opts: { variables?: Record<string, unknown>; decls?: Record<string, unknown> } = {},
) {
  const workflow = await givenWorkflow(a, step, opts.decls ?? {});
  return startWaiting(a, workflow, opts.variables ?? {});
}

async function startWaiting(a: Account, workflow: Awaited<ReturnType<typeof givenWorkflow>>, variables: Record<string, unknown> = {}) {
  const { execution } = await startRun({ workflow, trigger: 'api', variables, startedBy: a.admin.userId });
  const run = await eventually(
    () => readRun(execution),
    (e) => e.status !== 'PENDING' && e.status !== 'RUNNING',
    30_000,
  );
  expect(run.status, JSON.stringify(run.error)).toBe('WAITING_APPROVAL');
  const approvalId = run.approvalId as string;
  const approval = (await getApproval(a.account.accountId, approvalId)) as Approval;
  expect(approval.status).toBe('PENDING');
  return {
    accountId: a.account.accountId,
    executionId: execution.executionId,
    approvalId,
    workflowId: workflow.workflowId,
    approval,
    run,
  } satisfies Given;
}

/** Nothing changed: the approval is PENDING, undecided, the run still waits for it, no decision event. */
async function expectUntouched(g: Given) {
  const approval = await readApproval(g);
  expect(approval.status).toBe('PENDING');
  expect(approval.decision).toBeUndefined();
  expect(approval.decidedAt).toBeUndefined();
  const run = await readRun(g);
  expect(run.status).toBe('WAITING_APPROVAL');
  expect(run.approvalId).toBe(g.approvalId);
  const types = await eventTypes(g);
  expect(types).not.toContain('approval.decided');
  expect(types).not.toContain('approval.expired');
}

const settled = (g: Pick<Execution, 'accountId' | 'executionId'>) =>
  eventually(
    () => readRun(g),
    (e) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(e.status),
    30_000,
  );

/** A key of `userId` with the given scopes. */
const keyOf = (a: Account, userId: string, scopes: readonly Scope[], name = 'extra key') =>
  createKey({ accountId: a.account.accountId, userId }, { name, scopes, validityDays: 3 });

/** A JSON decision body of exactly `bytes` bytes (padded in an ignored field). */
function decisionOfSize(bytes: number, approvalId: string, decision = 'approve') {
  const head = JSON.stringify({ approvalId, decision, pad: '' }).slice(0, -2);
  const s = `${head}${'a'.repeat(bytes - head.length - 2)}"}`;
  expect(Buffer.byteLength(s)).toBe(bytes);
  return s;
}

describe('POST /api/webhook-trigger/approval', () => {
  let a: Account;
  let other: Account;
  let noScope: Awaited<ReturnType<typeof keyOf>>;
  beforeAll(async () => {
    [a, other] = await Promise.all([givenAccount(), givenAccount()]);
    noScope = await keyOf(a, a.admin.userId, ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WEBHOOK_TRIGGER'], 'no approval scope');
  });

  it('413 PAYLOAD_TOO_LARGE for 64 KiB + 1 byte, before credentials and JSON; exactly 64 KiB is accepted', async () => {
    const g = await givenApproval(a);
    const over = decisionOfSize(KIB64 + 1, g.approvalId);
    expectProblem(
      await call(DECIDE, { body: over, key: a.adminKey.token, headers: { 'content-type': 'application/json' } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectProblem(await call(DECIDE, { body: over, headers: { 'content-type': 'application/json' } }), 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(await call(DECIDE, { body: `{${'x'.repeat(KIB64)}`, key: 'garbage' }), 413, 'PAYLOAD_TOO_LARGE');
    await expectUntouched(g);

    const exact = await call(DECIDE, {
      body: decisionOfSize(KIB64, g.approvalId),
      key: a.adminKey.token,
      headers: { 'content-type': 'application/json' },
    });
    expect(exact.status, exact.text).toBe(200);
    expect(exact.json).toEqual({ ok: true, approvalId: g.approvalId, decision: 'approve' });
  });

  it('401: no key, malformed or invalid key, a key without APPROVAL_RESPOND, and a key only in ?api_key= (401 before 400 and 404)', async () => {
    const g = await givenApproval(a);
    const body = { approvalId: g.approvalId, decision: 'approve' };
    expectProblem(await post(body), 401, 'UNAUTHORIZED');
    expectProblem(await post(body, undefined, { authorization: 'Basic Zm9vOmJhcg==' }), 401, 'UNAUTHORIZED');
    expectProblem(await post(body, 'dyk_nope_nope'), 401, 'INVALID_API_KEY');
    // A well-formed token with a wrong secret (last character changed).
    const forged = a.adminKey.token.slice(0, -1) + (a.adminKey.token.endsWith('A') ? 'B' : 'A');
    expectProblem(await post(body, forged), 401, 'INVALID_API_KEY');
    expectProblem(await post(body, noScope.token), 401, 'MISSING_SCOPE');
    // The query credential is for the one-click link only.
    expectProblem(await call(`${DECIDE}?api_key=${encodeURIComponent(a.adminKey.token)}`, { json: body }), 401, 'UNAUTHORIZED');
    // 401 comes before 400 and 404.
    expectProblem(await call(DECIDE, { body: '{nope', headers: { 'content-type': 'application/json' } }), 401, 'UNAUTHORIZED');
    expectProblem(await post({ approvalId: g.approvalId, decision: 'maybe' }, noScope.token), 401, 'MISSING_SCOPE');
    expectProblem(await post({ approvalId: UNKNOWN_ID, decision: 'approve' }), 401, 'UNAUTHORIZED');
    await expectUntouched(g);
    // Nothing of the refused calls reached the audit.
    expect((await v1(`/approvals/${g.approvalId}`, a.adminKey.token)).json.history).toEqual([]);
  });

  it('400: INVALID_JSON, VALIDATION_FAILED (missing approvalId or decision, comment over 2,000), INVALID_DECISION; 400 before 404', async () => {
    const g = await givenApproval(a);
    const key = a.adminKey.token;
    const raw = (body: string) => call(DECIDE, { body, key, headers: { 'content-type': 'application/json' } });
    expectProblem(await raw('{"approvalId":'), 400, 'INVALID_JSON');
    expectProblem(await raw('not json'), 400, 'INVALID_JSON');
    const missingId = await post({ decision: 'approve' }, key);
    expectProblem(missingId, 400, 'VALIDATION_FAILED');
    expect(missingId.json.errors.map((e: { path: string }) => e.path)).toContain('approvalId');
    const missingDecision = await post({ approvalId: g.approvalId }, key);
    expectProblem(missingDecision, 400, 'VALIDATION_FAILED');
    expect(missingDecision.json.errors.map((e: { path: string }) => e.path)).toContain('decision');
    expectProblem(await post({ approvalId: g.approvalId, decision: 'maybe' }, key), 400, 'INVALID_DECISION');
    expectProblem(await post({ approvalId: g.approvalId, decision: '' }, key), 400, 'INVALID_DECISION');
    expectProblem(await post({ approvalId: g.approvalId, decision: 'approved' }, key), 400, 'INVALID_DECISION');
    const long = await post({ approvalId: g.approvalId, decision: 'approve', comment: 'x'.repeat(2001) }, key);
    expectProblem(long, 400, 'VALIDATION_FAILED');
    expect(long.json.errors).toEqual([expect.objectContaining({ path: 'comment' })]);
    // 400 before 404: an unknown approval with a bad decision is a 400.
    expectProblem(await post({ approvalId: UNKNOWN_ID, decision: 'maybe' }, key), 400, 'INVALID_DECISION');
    await expectUntouched(g);
  });

  it("404 APPROVAL_NOT_FOUND: an unknown id and another account's approval (which its own reviewers can still decide)", async () => {
    const g = await givenApproval(other);
    expectProblem(await post({ approvalId: UNKNOWN_ID, decision: 'approve' }, a.adminKey.token), 404, 'APPROVAL_NOT_FOUND');
    const foreign = await post({ approvalId: g.approvalId, decision: 'approve' }, a.adminKey.token);
    expectProblem(foreign, 404, 'APPROVAL_NOT_FOUND');
    expect(foreign.text).not.toContain(other.account.accountId);
    // 404 before 403: the other account's member is no reviewer, and yet the foreign id is just not found.
    expectProblem(await post({ approvalId: g.approvalId, decision: 'reject' }, a.memberKey.token), 404, 'APPROVAL_NOT_FOUND');
    await expectUntouched(g);
    expect((await v1(`/approvals/${g.approvalId}`, other.adminKey.token)).json.history).toEqual([]);
    const own = await post({ approvalId: g.approvalId, decision: 'approve' }, other.adminKey.token);
    expect(own.status, own.text).toBe(200);
  });

  it('403 NOT_A_REVIEWER: a member when reviewers are role:admin; a user: list without the caller; 403 before 409', async () => {
    const adminsOnly = await givenApproval(a, { reviewers: ['role:admin'] });
    expectProblem(await post({ approvalId: adminsOnly.approvalId, decision: 'approve' }, a.memberKey.token), 403, 'NOT_A_REVIEWER');
    await expectUntouched(adminsOnly);

    const named = await givenApproval(a, { reviewers: [`user:${a.member.userId}`] });
    // The admin is not listed: being an admin is not enough.
    expectProblem(await post({ approvalId: named.approvalId, decision: 'approve' }, a.adminKey.token), 403, 'NOT_A_REVIEWER');
    const third = await givenApproval(a, { reviewers: ['user:usr_01jzzzzzzzzzzzzzzzzzzzzzzz', 'role:member'] });
    expectProblem(await post({ approvalId: third.approvalId, decision: 'reject' }, a.adminKey.token), 403, 'NOT_A_REVIEWER');
    await expectUntouched(named);
    await expectUntouched(third);

    // The listed user decides; a non-reviewer then still gets 403 (not 409).
    const ok = await post({ approvalId: named.approvalId, decision: 'approve' }, a.memberKey.token);
    expect(ok.status, ok.text).toBe(200);
    expectProblem(await post({ approvalId: named.approvalId, decision: 'approve' }, a.adminKey.token), 403, 'NOT_A_REVIEWER');
  });

  it('409 APPROVAL_ALREADY_HANDLED for a second decision (same or opposite), with the state in detail; the first decision stands', async () => {
    const g = await givenApproval(a);
    const first = await post({ approvalId: g.approvalId, decision: 'approve', comment: 'first' }, a.adminKey.token);
    expect(first.status, first.text).toBe(200);
    for (const decision of ['approve', 'reject', 'REJECT']) {
      const again = await post({ approvalId: g.approvalId, decision, comment: 'second' }, a.adminKey.token);
      expectProblem(again, 409, 'APPROVAL_ALREADY_HANDLED');
      expect(again.json.detail).toMatch(/APPROVED/);
    }
    expect(await readApproval(g)).toMatchObject({ status: 'APPROVED', decision: 'approve', comment: 'first', decidedBy: a.admin.userId });
    const done = await settled(g);
    expect(done.status).toBe('SUCCEEDED');
    expect((await eventTypes(g)).filter((t) => t === 'approval.decided')).toHaveLength(1);
  });

  it('409 for an approval whose run was cancelled; the run stays CANCELLED', async () => {
    const g = await givenApproval(a);
    await cancelRun(g.accountId, g.executionId, 'no longer needed');
    expect((await readApproval(g)).status).toBe('CANCELLED');
    for (const decision of ['approve', 'reject']) {
      const res = await post({ approvalId: g.approvalId, decision }, a.adminKey.token);
      expectProblem(res, 409, 'APPROVAL_ALREADY_HANDLED');
      expect(res.json.detail).toMatch(/CANCELLED/);
    }
    expect((await readApproval(g)).status).toBe('CANCELLED');
    const run = await readRun(g);
    expect(run.status).toBe('CANCELLED');
    expect(await eventTypes(g)).not.toContain('approval.decided');
  });

  it('409 for an expired approval (expired by the deadline, or past its deadline before the sweep ran)', async () => {
    const expired = await givenApproval(a, { timeoutSeconds: 3600 });
    expect(await expireApproval(expired.approval, (expired.approval.expiresAt as number) + 1)).toBe(true);
    const res = await post({ approvalId: expired.approvalId, decision: 'approve' }, a.adminKey.token);
    expectProblem(res, 409, 'APPROVAL_ALREADY_HANDLED');
    expect(res.json.detail).toMatch(/EXPIRED/i);
    expect((await readApproval(expired)).status).toBe('EXPIRED');
    expect((await settled(expired)).error?.code).toBe('APPROVAL_EXPIRED');

    // Deadline passed, no sweep yet: still a 409, and the approval is not decided.
    const due = await givenApproval(a, { timeoutSeconds: 3600 });
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: approvalKey(due.accountId, due.approvalId),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': Date.now() - 1000 },
      }),
    );
    const late = await post({ approvalId: due.approvalId, decision: 'approve' }, a.adminKey.token);
    expectProblem(late, 409, 'APPROVAL_ALREADY_HANDLED');
    expect(late.json.detail).toMatch(/expired/i);
    await expectUntouched(due);
  });

  it('200 { ok, approvalId, decision } with the decision lower-cased; approve moves the run on to SUCCEEDED', async () => {
    const g = await givenApproval(a);
    const comment = 'ç'.repeat(2000);
    const before = Date.now();
    const res = await post({ approvalId: g.approvalId, decision: 'APPROVE', comment }, a.adminKey.token);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toEqual({ ok: true, approvalId: g.approvalId, decision: 'approve' });
    expect(res.headers.get('x-ratelimit-limit')).toBeTruthy();
    const approval = await readApproval(g);
    expect(approval).toMatchObject({ status: 'APPROVED', decision: 'approve', comment, decidedBy: a.admin.userId });
    expect(approval.decidedAt).toBeGreaterThanOrEqual(before);
    const done = await settled(g);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ after: `done by ${a.admin.userId}` });
    expect(done.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['approve', 'SUCCEEDED'],
      ['after', 'SUCCEEDED'],
    ]);
    const types = await eventTypes(g);
    expect(types.filter((t) => t === 'approval.decided')).toHaveLength(1);
    expect(types.at(-1)).toBe('execution.succeeded');
  });

  it('200 reject (`Reject`): the approval is REJECTED and the run FAILED with APPROVAL_REJECTED', async () => {
    const g = await givenApproval(a, { reviewers: ['role:member'] });
    const res = await post({ approvalId: g.approvalId, decision: 'Reject', comment: 'not today' }, a.memberKey.token);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ ok: true, approvalId: g.approvalId, decision: 'reject' });
    expect(await readApproval(g)).toMatchObject({
      status: 'REJECTED',
      decision: 'reject',
      comment: 'not today',
      decidedBy: a.member.userId,
    });
    const done = await settled(g);
    expect(done.status).toBe('FAILED');
    expect(done.error?.code).toBe('APPROVAL_REJECTED');
    expect(done.steps[0]).toMatchObject({ stepId: 'approve', status: 'FAILED', error: { code: 'APPROVAL_REJECTED' } });
    expect(done.steps[1]?.status).not.toBe('SUCCEEDED');
    expect(done.variables).not.toHaveProperty('after');
    const types = await eventTypes(g);
    expect(types.filter((t) => t === 'approval.decided')).toHaveLength(1);
    expect(types.at(-1)).toBe('execution.failed');
  });

  it("a reject on a step with onReject: 'continue' lets the run go on", async () => {
    const g = await givenApproval(a, { onReject: 'continue' });
    expect((await post({ approvalId: g.approvalId, decision: 'reject' }, a.adminKey.token)).status).toBe(200);
    const done = await settled(g);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
  });
});

describe('the one-click link', () => {
  let a: Account;
  let other: Account;
  let key: string;
  beforeAll(async () => {
    [a, other] = await Promise.all([givenAccount(), givenAccount()]);
    key = a.adminKey.token;
  });

  it('without confirm=1: a confirmation page with a form POST (no link), the page headers, and nothing recorded', async () => {
    const g = await givenApproval(a, { description: 'Deploy build 42' });
    for (const decision of ['approve', 'reject'] as const) {
      const res = await link(g.approvalId, decision, { api_key: key, comment: 'looks good' });
      const action = expectConfirmationPage(res, g.approvalId, decision, key);
      expect(action.searchParams.get('comment')).toBe('looks good');
      expect(res.text).toContain('Ship it');
      expect(res.text).toContain('Deploy build 42');
      expect(res.text).toContain('looks good');
      expect(res.text).toContain(g.executionId);
      // The workflow by its name, as people know it (not its id).
      expect(res.text).toContain('Release train');
      expect(res.text).not.toContain(g.workflowId);
      expect(res.text).toContain(decision === 'approve' ? 'Approve' : 'Reject');
    }
    // confirm with any other value is not a confirmation.
    expectConfirmationPage(await link(g.approvalId, 'approve', { api_key: key, confirm: 'true' }), g.approvalId, 'approve', key);
    expectConfirmationPage(await link(g.approvalId, 'approve', { api_key: key, confirm: '0' }), g.approvalId, 'approve', key);
    // A POST without confirm=1 is the page too.
    const posted = await link(
      g.approvalId,
      'approve',
      { api_key: key },
      { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' },
    );
    expectConfirmationPage(posted, g.approvalId, 'approve', key);
    await expectUntouched(g);
    expect((await v1(`/approvals/${g.approvalId}`, key)).json.history).toEqual([]);
  });

  it('HEAD answers 200 with the page headers and no body, with or without confirm=1, recording nothing', async () => {
    const g = await givenApproval(a);
    for (const query of [{ api_key: key }, { api_key: key, confirm: '1' }] as Record<string, string>[]) {
      const res = await link(g.approvalId, 'approve', query, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expectPageHeaders(res.headers);
      expect(res.text).toBe('');
    }
    await expectUntouched(g);
  });

  it('GET with confirm=1 from a browser decides: the "Approved" page, the run moves on to SUCCEEDED', async () => {
    const g = await givenApproval(a);
    const res = await link(g.approvalId, 'approve', { api_key: key, comment: 'via link', confirm: '1' });
    expectPage(res, 200);
    expect(res.text).toContain('<title>Approved</title>');
    expect(res.text).not.toMatch(/<form/i);
    expect(await readApproval(g)).toMatchObject({
      status: 'APPROVED',
      decision: 'approve',
      comment: 'via link',
      decidedBy: a.admin.userId,
    });
    expect((await settled(g)).status).toBe('SUCCEEDED');
    // Once decided, the link answers 409 pages, with and without confirm.
    expectPage(await link(g.approvalId, 'approve', { api_key: key }), 409);
    const again = await link(g.approvalId, 'reject', { api_key: key, confirm: '1' });
    expectPage(again, 409);
    expect(again.text).toMatch(/APPROVED/);
    expect((await readApproval(g)).decision).toBe('approve');
  });

  it('GET with confirm=1 from link-preview bots only shows the confirmation page', async () => {
    const g = await givenApproval(a);
    for (const ua of PREVIEW_BOTS) {
      const res = await link(g.approvalId, 'approve', { api_key: key, confirm: '1' }, { headers: { 'user-agent': ua } });
      expectConfirmationPage(res, g.approvalId, 'approve', key);
      await expectUntouched(g);
    }
    expect((await v1(`/approvals/${g.approvalId}`, key)).json.history).toEqual([]);
  });

  it('the form POST (confirm=1, form content type, empty body) decides: "Rejected", the run FAILED with APPROVAL_REJECTED', async () => {
    const g = await givenApproval(a);
    const page = await link(g.approvalId, 'reject', { api_key: key, comment: 'no' });
    const action = expectConfirmationPage(page, g.approvalId, 'reject', key);
    // What a browser does when the button is pressed: POST to the form's action.
    const form = new URLSearchParams({ page: hiddenOf(page) }).toString();
    const res = await call(`${action.pathname}${action.search}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER, origin: stack.url },
      body: form,
    });
    expectPage(res, 200);
    expect(res.text).toContain('<title>Rejected</title>');
    expect(await readApproval(g)).toMatchObject({ status: 'REJECTED', decision: 'reject', comment: 'no' });
    const done = await settled(g);
    expect(done.status).toBe('FAILED');
    expect(done.error?.code).toBe('APPROVAL_REJECTED');
    // A POST from a bot user agent decides too (a form submission is deliberate), but only once.
    const second = await call(`${action.pathname}${action.search}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expectPage(second, 409);
  });

  it('refuses a cross-site POST and a form without its page value with 403 pages, and changes nothing; the page value binds key and link', async () => {
    const g = await givenApproval(a);
    const path = linkPath(g.approvalId, 'approve', { api_key: key, confirm: '1' });
    const post = (body: string, headers: Record<string, string> = {}) =>
      call(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': BROWSER, ...headers },
        body,
      });
    const good = pageForm(key, g.approvalId, 'approve');
    for (const headers of [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
    ] as Record<string, string>[]) {
      const res = await post(good, headers);
      expectPage(res, 403);
      expect(res.text).toMatch(/another site/);
    }
    const other = await keyOf(a, a.admin.userId, ['APPROVAL_RESPOND'], 'another key');
    for (const body of [
      '',
      'page=',
      'page=garbage',
      pageForm(other.token, g.approvalId, 'approve'),
      pageForm(key, g.approvalId, 'reject'),
      pageForm(key, UNKNOWN_ID, 'approve'),
      `${good}x`,
    ]) {
      const res = await post(body, { 'sec-fetch-site': 'same-origin' });
      expectPage(res, 403);
      expect(res.text).toMatch(/did not come from the page/);
    }
    await expectUntouched(g);
    expect((await v1(`/approvals/${g.approvalId}`, key)).json.history).toEqual([]);
    // The page's own form, from the same origin.
    const res = await post(good, { 'sec-fetch-site': 'same-origin', origin: stack.url });
    expectPage(res, 200);
    expect(await readApproval(g)).toMatchObject({ status: 'APPROVED' });
  });

  it('errors are HTML pages with the right status: 401, 403, 404, 409, 400 for /maybe and a long comment', async () => {
    const g = await givenApproval(a, { reviewers: ['role:admin'] });
    const noScope = await keyOf(a, a.admin.userId, ['WORKFLOW_READ'], 'read only');
    for (const confirm of [{}, { confirm: '1' }] as Record<string, string>[]) {
      const pages = [
        [await link(g.approvalId, 'approve', { ...confirm }), 401],
        [await link(g.approvalId, 'approve', { api_key: 'dyk_nope_nope', ...confirm }), 401],
        [await link(g.approvalId, 'approve', { api_key: noScope.token, ...confirm }), 401],
        [await link(g.approvalId, 'approve', { api_key: a.memberKey.token, ...confirm }), 403],
        [await link(UNKNOWN_ID, 'approve', { api_key: key, ...confirm }), 404],
        [await link(g.approvalId, 'approve', { api_key: other.adminKey.token, ...confirm }), 404],
        [await link(g.approvalId, 'maybe', { api_key: key, ...confirm }), 400],
        [await link(g.approvalId, 'approve', { api_key: key, comment: 'x'.repeat(2001), ...confirm }), 400],
      ] as const;
      for (const [res, status] of pages) {
        expectPage(res, status);
        expect(res.text).not.toMatch(/<form/i);
        if (status === 401) expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    }
    await expectUntouched(g);

    // 409 pages: cancelled and expired approvals.
    const cancelled = await givenApproval(a);
    await cancelRun(cancelled.accountId, cancelled.executionId, undefined);
    expectPage(await link(cancelled.approvalId, 'approve', { api_key: key }), 409);
    expectPage(await link(cancelled.approvalId, 'approve', { api_key: key, confirm: '1' }), 409);
    const expired = await givenApproval(a, { timeoutSeconds: 3600 });
    await expireApproval(expired.approval, (expired.approval.expiresAt as number) + 1);
    expectPage(await link(expired.approvalId, 'approve', { api_key: key }), 409);
    expectPage(await link(expired.approvalId, 'approve', { api_key: key, confirm: '1' }), 409);
    expectPage(
      await link(
        expired.approvalId,
        'approve',
        { api_key: key, confirm: '1' },
        { method: 'POST', body: pageForm(key, expired.approvalId, 'approve') },
      ),
      409,
    );
  });

  it('user data is escaped on every page: title from a variable, description, comment and a hostile id', async () => {
    const g = await givenApproval(
      a,
      { title: '{% $vars.title %}', description: "{% 'about ' & $vars.title %}" },
      { decls: { title: { type: 'string' } }, variables: { title: `Deploy ${XSS}` } },
    );
    expect(g.approval.title).toBe(`Deploy ${XSS}`);
    const comment = `<img src=x onerror="alert(2)"> & ${XSS} '"`;
    const page = await link(g.approvalId, 'approve', { api_key: key, comment });
    expectConfirmationPage(page, g.approvalId, 'approve', key);
    expect(page.text).not.toContain('<img');
    expect(page.text).not.toContain('onerror="');
    expect(decodeEntities(page.text)).toContain(`Deploy ${XSS}`);
    expect(decodeEntities(page.text)).toContain(comment);
    // The bot's view of the same.
    const bot = await link(
      g.approvalId,
      'approve',
      { api_key: key, comment, confirm: '1' },
      { headers: { 'user-agent': PREVIEW_BOTS[0] as string } },
    );
    expectPage(bot, 200);
    expect(bot.text).not.toContain('<img');

    // A hostile approval id in an error page.
    const hostile = await link(XSS, 'approve', { api_key: key });
    expectPage(hostile, 404);
    expect(decodeEntities(hostile.text)).toContain(XSS);
    const hostileDecision = await call(`${DECIDE}/${g.approvalId}/${encodeURIComponent(`<b>${XSS}`)}?api_key=${encodeURIComponent(key)}`);
    expect([400, 404]).toContain(hostileDecision.status);
    expect(hostileDecision.text).not.toContain('<script');
    expect(hostileDecision.text).not.toContain('<b>');

    // The decided page, and the 409 page after it.
    const decided = await link(g.approvalId, 'approve', { api_key: key, comment, confirm: '1' });
    expectPage(decided, 200);
    expect(decided.text).not.toContain('<img');
    expect(decodeEntities(decided.text)).toContain(`Deploy ${XSS}`);
    const handled = await link(g.approvalId, 'approve', { api_key: key, comment });
    expectPage(handled, 409);
    expect(handled.text).not.toContain('<img');
    // The comment is stored as given (escaping is the page's job).
    expect((await readApproval(g)).comment).toBe(comment);
  });

  it('OPTIONS (and other methods) answer 405 and record nothing', async () => {
    const g = await givenApproval(a);
    for (const method of ['OPTIONS', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call(linkPath(g.approvalId, 'approve', { api_key: key, confirm: '1' }), {
        method,
        headers: { 'user-agent': BROWSER },
      });
      expect(res.status, `${method}: ${res.text}`).toBe(405);
      expect(res.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['GET', 'HEAD', 'POST']);
    }
    await expectUntouched(g);
  });
});

describe('v1 approvals', () => {
  let a: Account;
  let other: Account;
  beforeAll(async () => {
    [a, other] = await Promise.all([givenAccount(), givenAccount()]);
  });

  it('lists the PENDING approvals the key owner may decide, by status, with cursor paging', async () => {
    const adminOnly = await givenApproval(a, { reviewers: ['role:admin'] });
    const memberRole = await givenApproval(a, { reviewers: ['role:member'] });
    const memberNamed = await givenApproval(a, { reviewers: [`user:${a.member.userId}`] });
    const both = await givenApproval(a, { reviewers: ['role:admin', `user:${a.member.userId}`] });
    await givenApproval(other, { reviewers: ['role:admin', 'role:member'] });

    const ids = (r: Res) => r.json.items.map((i: { approvalId: string }) => i.approvalId).sort();
    const asAdmin = await v1('/approvals', a.adminKey.token);
    expect(asAdmin.status, asAdmin.text).toBe(200);
    expect(ids(asAdmin)).toEqual([adminOnly.approvalId, both.approvalId].sort());
    expect(asAdmin.json.nextCursor).toBeNull();
    expect(asAdmin.json.items.every((i: { status: string }) => i.status === 'PENDING')).toBe(true);
    const asMember = await v1('/approvals?status=PENDING', a.memberKey.token);
    expect(ids(asMember)).toEqual([memberRole.approvalId, memberNamed.approvalId, both.approvalId].sort());
    expect(asMember.json.items.find((i: { approvalId: string }) => i.approvalId === both.approvalId)).toMatchObject({
      executionId: both.executionId,
      workflowId: both.workflowId,
      stepId: 'approve',
      title: 'Ship it',
      reviewers: ['role:admin', `user:${a.member.userId}`],
      status: 'PENDING',
      createdAt: expect.any(Number),
    });

    // Paging one at a time gives the same set; the cursor is bound to the user and the query.
    const seen: string[] = [];
    let cursor: string | null = null;
    let first: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const page: Res = await v1(`/approvals?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, a.memberKey.token);
      expect(page.status, page.text).toBe(200);
      expect(page.json.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.json.items.map((i: { approvalId: string }) => i.approvalId));
      cursor = page.json.nextCursor;
      first ??= cursor;
      if (!cursor) break;
    }
    expect(cursor).toBeNull();
    expect(seen.sort()).toEqual(ids(asMember));
    expect(first).toBeTruthy();
    expectProblem(await v1(`/approvals?limit=1&cursor=${encodeURIComponent(first as string)}`, a.adminKey.token), 400, 'INVALID_CURSOR');
    expectProblem(
      await v1(`/approvals?status=APPROVED&limit=1&cursor=${encodeURIComponent(first as string)}`, a.memberKey.token),
      400,
      'INVALID_CURSOR',
    );
    expectProblem(await v1(`/approvals?limit=1&cursor=${encodeURIComponent(`x${first}`)}`, a.memberKey.token), 400, 'INVALID_CURSOR');
    const bad = await v1('/approvals?status=DONE&limit=500', a.memberKey.token);
    expectProblem(bad, 400, 'VALIDATION_FAILED');

    // ?status=APPROVED lists the decided ones.
    expect((await post({ approvalId: both.approvalId, decision: 'approve' }, a.memberKey.token)).status).toBe(200);
    expect((await post({ approvalId: memberRole.approvalId, decision: 'reject' }, a.memberKey.token)).status).toBe(200);
    const approved = await v1('/approvals?status=APPROVED', a.memberKey.token);
    expect(ids(approved)).toEqual([both.approvalId]);
    expect(approved.json.items[0]).toMatchObject({ status: 'APPROVED', decision: 'approve', decidedBy: a.member.userId });
    expect(ids(await v1('/approvals?status=REJECTED', a.memberKey.token))).toEqual([memberRole.approvalId]);
    expect(ids(await v1('/approvals', a.memberKey.token))).toEqual([memberNamed.approvalId]);
    expect(ids(await v1('/approvals', a.adminKey.token))).toEqual([adminOnly.approvalId]);
    expect(ids(await v1('/approvals?status=APPROVED', a.adminKey.token))).toEqual([both.approvalId]);
  });

  it('a key without APPROVAL_RESPOND gets 403 INSUFFICIENT_SCOPE on every v1 approvals route; no key is 401', async () => {
    const g = await givenApproval(a);
    const noScope = await keyOf(a, a.admin.userId, ['WORKFLOW_READ', 'WORKFLOW_EXECUTE', 'WEBHOOK_TRIGGER'], 'no approval scope');
    expectProblem(await v1('/approvals', noScope.token), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await v1(`/approvals/${g.approvalId}`, noScope.token), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await v1(`/approvals/${g.approvalId}/approve`, noScope.token, { json: {} }), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await v1(`/approvals/${g.approvalId}/reject`, noScope.token, { json: {} }), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await call('/api/v1/approvals'), 401, 'UNAUTHORIZED');
    expectProblem(
      await call(`/api/v1/approvals/${g.approvalId}/approve?api_key=${encodeURIComponent(a.adminKey.token)}`, { json: {} }),
      401,
      'UNAUTHORIZED',
    );
    await expectUntouched(g);
  });

  it('detail: form, context and history; 404 for unknown and foreign ids, 403 for a non-reviewer', async () => {
    const g = await givenApproval(
      a,
      {
        description: "{% 'Release ' & $vars.version %}",
        timeoutSeconds: 3600,
        form: [
          { name: 'ticket', type: 'string', label: 'Change ticket', required: true },
          { name: 'version', type: 'string', default: '{% $vars.version %}' },
        ],
      },
      { decls: { version: { type: 'string', default: '1.0' } }, variables: { version: '2.5' } },
    );
    const res = await v1(`/approvals/${g.approvalId}`, a.adminKey.token);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      approvalId: g.approvalId,
      executionId: g.executionId,
      workflowId: g.workflowId,
      stepId: 'approve',
      status: 'PENDING',
      title: 'Ship it',
      description: 'Release 2.5',
      reviewers: ['role:admin'],
      form: [
        { name: 'ticket', type: 'string', label: 'Change ticket', required: true },
        { name: 'version', type: 'string', required: false, default: '2.5' },
      ],
      expiresAt: g.approval.expiresAt,
      createdAt: g.approval.createdAt,
      history: [],
      context: { executionStatus: 'WAITING_APPROVAL', trigger: 'api', variables: { version: '2.5' } },
    });
    expect(res.json).not.toHaveProperty('accountId');
    expectProblem(await v1(`/approvals/${UNKNOWN_ID}`, a.adminKey.token), 404, 'APPROVAL_NOT_FOUND');
    expectProblem(await v1(`/approvals/${g.approvalId}`, other.adminKey.token), 404, 'APPROVAL_NOT_FOUND');
    expectProblem(await v1(`/approvals/${g.approvalId}/approve`, other.adminKey.token, { json: {} }), 404, 'APPROVAL_NOT_FOUND');
    expectProblem(await v1(`/approvals/${g.approvalId}`, a.memberKey.token), 403, 'NOT_A_REVIEWER');
  });

  it('approve validates formData against the form (400 with errors[].path), then the values become run variables and the audit keeps original vs edited', async () => {
    const g = await givenApproval(
      a,
      {
        form: [
          { name: 'ticket', type: 'string', required: true },
          { name: 'priority', type: 'string', enum: ['low', 'high'], default: 'low' },
          { name: 'replicas', type: 'number', default: '{% $vars.replicas %}' },
          { name: 'notify', type: 'boolean', default: true },
        ],
      },
      { decls: { replicas: { type: 'number', default: 3 } } },
    );
    const approve = (body: unknown) =>
      v1(`/approvals/${g.approvalId}/approve`, a.adminKey.token, { json: body, headers: { 'user-agent': 'v1-client/1.0' } });
    const paths = (r: Res) => r.json.errors.map((e: { path: string }) => e.path).sort();

    const missing = await approve({});
    expectProblem(missing, 400, 'VALIDATION_FAILED');
    expect(paths(missing)).toEqual(['formData.ticket']);
    const empty = await approve({ formData: { ticket: '' } });
    expect(paths(empty)).toEqual(['formData.ticket']);
    const wrongType = await approve({ formData: { ticket: 'CHG-1', replicas: 'three', notify: 'yes' } });
    expectProblem(wrongType, 400, 'VALIDATION_FAILED');
    expect(paths(wrongType)).toEqual(['formData.notify', 'formData.replicas']);
    const notInEnum = await approve({ formData: { ticket: 'CHG-1', priority: 'urgent' } });
    expectProblem(notInEnum, 400, 'VALIDATION_FAILED');
    expect(paths(notInEnum)).toEqual(['formData.priority']);
    const unknown = await approve({ formData: { ticket: 'CHG-1', bogus: 1 } });
    expectProblem(unknown, 400, 'VALIDATION_FAILED');
    expect(paths(unknown)).toEqual(['formData.bogus']);
    const notObject = await approve({ formData: ['CHG-1'] });
    expectProblem(notObject, 400, 'VALIDATION_FAILED');
    await expectUntouched(g);

    const ok = await approve({ comment: 'with edits', formData: { ticket: 'CHG-7', priority: 'high', replicas: 5 } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({
      approvalId: g.approvalId,
      status: 'APPROVED',
      decision: 'approve',
      comment: 'with edits',
      decidedBy: a.admin.userId,
    });
    const done = await settled(g);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ ticket: 'CHG-7', priority: 'high', replicas: 5, notify: true });

    const { history } = (await v1(`/approvals/${g.approvalId}`, a.adminKey.token)).json;
    const decided = history.filter((h: { outcome: string }) => h.outcome === 'decided');
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({
      channel: 'v1',
      decision: 'approve',
      comment: 'with edits',
      userId: a.admin.userId,
      keyId: a.adminKey.id,
      userAgent: 'v1-client/1.0',
      form: { original: { priority: 'low', replicas: 3, notify: true }, edited: { ticket: 'CHG-7', priority: 'high', replicas: 5 } },
    });
    // The refused form submissions are audited as 400s (a body that is not even an object is refused before any decision).
    const refused = history.filter((h: { outcome: string }) => h.outcome === 'refused');
    expect(refused.length).toBe(5);
    expect(
      refused.every(
        (h: { status: number; code: string; channel: string }) => h.status === 400 && h.code === 'VALIDATION_FAILED' && h.channel === 'v1',
      ),
    ).toBe(true);
  });

  it('reject: REJECTED, the run FAILED with APPROVAL_REJECTED; then approve and reject are 409', async () => {
    const g = await givenApproval(a, { form: [{ name: 'ticket', type: 'string', required: true }] });
    const res = await v1(`/approvals/${g.approvalId}/reject`, a.adminKey.token, { json: { comment: 'nope' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ approvalId: g.approvalId, status: 'REJECTED', decision: 'reject', comment: 'nope' });
    const done = await settled(g);
    expect(done.status).toBe('FAILED');
    expect(done.error?.code).toBe('APPROVAL_REJECTED');
    expectProblem(
      await v1(`/approvals/${g.approvalId}/approve`, a.adminKey.token, { json: { formData: { ticket: 'X' } } }),
      409,
      'APPROVAL_ALREADY_HANDLED',
    );
    expectProblem(await v1(`/approvals/${g.approvalId}/reject`, a.adminKey.token, { json: {} }), 409, 'APPROVAL_ALREADY_HANDLED');
    const long = await v1(`/approvals/${g.approvalId}/reject`, a.adminKey.token, { json: { comment: 'x'.repeat(2001) } });
    expectProblem(long, 400, 'VALIDATION_FAILED');
  });
});

describe('audit', () => {
  it('every decision and refused attempt is in history with who, key, channel, IP, user agent, time and comment', async () => {
    const a = await givenAccount();
    const second = await keyOf(a, a.admin.userId, ['APPROVAL_RESPOND'], 'link key');
    const g = await givenApproval(a, { reviewers: ['role:admin'] });
    const started = Date.now();
    // 1. a member (not a reviewer) by POST → 403
    expectProblem(
      await post({ approvalId: g.approvalId, decision: 'approve', comment: 'member try' }, a.memberKey.token, {
        'user-agent': 'ua-member',
      }),
      403,
      'NOT_A_REVIEWER',
    );
    // 2. a member via the link, confirmed → 403 page
    expectPage(
      await link(
        g.approvalId,
        'reject',
        { api_key: a.memberKey.token, confirm: '1', comment: 'member link' },
        { headers: { 'user-agent': 'ua-member-browser' } },
      ),
      403,
    );
    // 3. the decision: the admin's second key, by the link's form POST
    const decided = await link(
      g.approvalId,
      'approve',
      { api_key: second.token, confirm: '1', comment: 'ship' },
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ua-admin-browser' },
        body: pageForm(second.token, g.approvalId, 'approve'),
      },
    );
    expectPage(decided, 200);
    // 4. a second decision by POST → 409
    expectProblem(
      await post({ approvalId: g.approvalId, decision: 'reject', comment: 'too late' }, a.adminKey.token, {
        'user-agent': 'ua-admin-post',
      }),
      409,
      'APPROVAL_ALREADY_HANDLED',
    );
    // 5. and by v1 → 409
    expectProblem(
      await v1(`/approvals/${g.approvalId}/reject`, a.adminKey.token, { json: { comment: 'v1 late' }, headers: { 'user-agent': 'ua-v1' } }),
      409,
      'APPROVAL_ALREADY_HANDLED',
    );
    // Not decision attempts, not audited: a confirmation page, and a 400 before the approval is looked up.
    await link(g.approvalId, 'approve', { api_key: a.adminKey.token });
    await post({ approvalId: g.approvalId, decision: 'maybe' }, a.adminKey.token);
    const ended = Date.now();

    const res = await v1(`/approvals/${g.approvalId}`, a.adminKey.token);
    expect(res.status, res.text).toBe(200);
    const history = res.json.history as Record<string, unknown>[];
    expect(history).toHaveLength(5);
    const sorted = [...history].sort((x, y) => (x.at as number) - (y.at as number));
    expect(sorted).toEqual(history);
    for (const h of history) {
      expect(h.at).toBeGreaterThanOrEqual(started);
      expect(h.at).toBeLessThanOrEqual(ended);
      expect(h.sourceIp).toBe('127.0.0.1');
      expect(h.auditId).toEqual(expect.any(String));
      expect(h).not.toHaveProperty('accountId');
    }
    expect(history).toEqual([
      expect.objectContaining({
        outcome: 'refused',
        status: 403,
        code: 'NOT_A_REVIEWER',
        channel: 'post',
        decision: 'approve',
        comment: 'member try',
        userId: a.member.userId,
        keyId: a.memberKey.id,
        userAgent: 'ua-member',
      }),
      expect.objectContaining({
        outcome: 'refused',
        status: 403,
        code: 'NOT_A_REVIEWER',
        channel: 'link',
        decision: 'reject',
        comment: 'member link',
        userId: a.member.userId,
        keyId: a.memberKey.id,
        userAgent: 'ua-member-browser',
      }),
      expect.objectContaining({
        outcome: 'decided',
        channel: 'link',
        decision: 'approve',
        comment: 'ship',
        userId: a.admin.userId,
        keyId: second.id,
        userAgent: 'ua-admin-browser',
      }),
      expect.objectContaining({
        outcome: 'refused',
        status: 409,
        code: 'APPROVAL_ALREADY_HANDLED',
        channel: 'post',
        decision: 'reject',
        comment: 'too late',
        userId: a.admin.userId,
        keyId: a.adminKey.id,
        userAgent: 'ua-admin-post',
      }),
      expect.objectContaining({
        outcome: 'refused',
        status: 409,
        code: 'APPROVAL_ALREADY_HANDLED',
        channel: 'v1',
        decision: 'reject',
        comment: 'v1 late',
        userId: a.admin.userId,
        keyId: a.adminKey.id,
        userAgent: 'ua-v1',
      }),
    ]);
    expect(res.json).toMatchObject({ status: 'APPROVED', decision: 'approve', comment: 'ship', decidedBy: a.admin.userId });
    // The API key never appears in the history.
    expect(res.text).not.toContain(second.token);
  });
});

describe('deadlines', () => {
  let a: Account;
  beforeAll(async () => {
    a = await givenAccount();
  });

  // The expiry index is shared by every test file running in parallel: sweeping with a `now` just past
  // a 60 s deadline of our own only reaches approvals with 60 s deadlines (every other file uses hours).
  const sweepPast = (g: Given) => expireDueApprovals((g.approval.expiresAt as number) + 1);

  it("onTimeout 'fail': the sweep expires the approval and fails the run with APPROVAL_EXPIRED; later decisions are 409", async () => {
    const g = await givenApproval(a, { timeoutSeconds: 60 });
    expect(g.approval.expiresAt).toBe(g.approval.createdAt + 60_000);
    // Before the deadline the sweep leaves it alone.
    await expireDueApprovals((g.approval.expiresAt as number) - 1);
    await expectUntouched(g);

    await sweepPast(g);
    const approval = await readApproval(g);
    expect(approval).toMatchObject({ status: 'EXPIRED', decidedBy: 'timeout' });
    expect(approval.decision).toBeUndefined();
    const done = await settled(g);
    expect(done.status).toBe('FAILED');
    expect(done.error?.code).toBe('APPROVAL_EXPIRED');
    const types = await eventTypes(g);
    expect(types).toContain('approval.expired');
    expect(types).not.toContain('approval.decided');

    expectProblem(await post({ approvalId: g.approvalId, decision: 'approve' }, a.adminKey.token), 409, 'APPROVAL_ALREADY_HANDLED');
    expectProblem(await v1(`/approvals/${g.approvalId}/approve`, a.adminKey.token, { json: {} }), 409, 'APPROVAL_ALREADY_HANDLED');
    expectPage(await link(g.approvalId, 'approve', { api_key: a.adminKey.token }), 409);
    expectPage(await link(g.approvalId, 'approve', { api_key: a.adminKey.token, confirm: '1' }), 409);
    const detail = await v1(`/approvals/${g.approvalId}`, a.adminKey.token);
    expect(detail.json.status).toBe('EXPIRED');
    expect(detail.json.history).toEqual([
      expect.objectContaining({ outcome: 'decided', channel: 'timeout' }),
      expect.objectContaining({ outcome: 'refused', status: 409, channel: 'post' }),
      expect.objectContaining({ outcome: 'refused', status: 409, channel: 'v1' }),
      expect.objectContaining({ outcome: 'refused', status: 409, channel: 'link' }),
    ]);
    // A second sweep changes nothing.
    await sweepPast(g);
    expect((await readRun(g)).status).toBe('FAILED');
    expect((await eventTypes(g)).filter((t) => t === 'approval.expired')).toHaveLength(1);
  });

  it("onTimeout 'approve': the run continues to SUCCEEDED", async () => {
    const g = await givenApproval(a, { timeoutSeconds: 60, onTimeout: 'approve' });
    await sweepPast(g);
    expect(await readApproval(g)).toMatchObject({ status: 'EXPIRED', decision: 'approve', decidedBy: 'timeout' });
    const done = await settled(g);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ after: 'done by timeout' });
    expectProblem(await post({ approvalId: g.approvalId, decision: 'reject' }, a.adminKey.token), 409, 'APPROVAL_ALREADY_HANDLED');
  });

  it('a decision made before the deadline wins over the sweep', async () => {
    const g = await givenApproval(a, { timeoutSeconds: 60 });
    expect((await post({ approvalId: g.approvalId, decision: 'approve' }, a.adminKey.token)).status).toBe(200);
    expect(await expireApproval(await readApproval(g), (g.approval.expiresAt as number) + 1)).toBe(false);
    await sweepPast(g);
    expect((await readApproval(g)).status).toBe('APPROVED');
    expect((await settled(g)).status).toBe('SUCCEEDED');
  });

  it('approvals decided before their deadline do not keep later due approvals from expiring', { timeout: 180_000 }, async () => {
    // 25 approvals (one sweep page) decided before their deadlines, then one left pending.
    const workflow = await givenWorkflow(a, { timeoutSeconds: 60 });
    const decided: Given[] = [];
    for (let i = 0; i < 5; i++) decided.push(...(await Promise.all(Array.from({ length: 5 }, () => startWaiting(a, workflow)))));
    const results = await Promise.all(decided.map((g) => post({ approvalId: g.approvalId, decision: 'approve' }, a.adminKey.token)));
    expect(results.map((r) => r.status)).toEqual(decided.map(() => 200));
    const due = await startWaiting(a, workflow);
    expect(due.approval.expiresAt as number).toBeGreaterThan(Math.max(...decided.map((g) => g.approval.expiresAt as number)));

    await sweepPast(due);
    expect((await readApproval(due)).status).toBe('EXPIRED');
    expect((await settled(due)).error?.code).toBe('APPROVAL_EXPIRED');
    for (const g of decided) expect((await readApproval(g)).status).toBe('APPROVED');
  });
});

describe('rate limit (RATE_LIMITS={"pro":3})', () => {
  let a: Account;
  let g: Given;
  beforeAll(async () => {
    process.env.RATE_LIMITS = JSON.stringify({ pro: 3 });
    resetConfig();
    a = await givenAccount({ plan: 'pro' });
    g = await givenApproval(a);
  });
  afterAll(() => {
    delete process.env.RATE_LIMITS;
    resetConfig();
  });

  it('429 RATE_LIMITED with Retry-After and X-RateLimit-* past the budget (POST, link page, v1); 413 and 401 first, 429 before 400', {
    timeout: 90_000,
  }, async () => {
    // Keep the requests inside one fixed minute window.
    const into = Date.now() % 60_000;
    if (into > 40_000) await new Promise((r) => setTimeout(r, 60_000 - into + 250));
    const key = a.adminKey.token;
    const budget = [
      await post({ approvalId: UNKNOWN_ID, decision: 'approve' }, key),
      await v1('/approvals', key),
      await link(g.approvalId, 'approve', { api_key: key }),
    ];
    expect(budget.map((r) => r.status)).toEqual([404, 200, 200]);
    expect(budget.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0']);
    for (const r of budget) expect(r.headers.get('x-ratelimit-limit')).toBe('3');

    const limited = await post({ approvalId: g.approvalId, decision: 'approve' }, key);
    expectProblem(limited, 429, 'RATE_LIMITED');
    expectRateLimitedHeaders(limited.headers, 3);

    // Order: 413 and 401 come before 429; 429 comes before 400, 404, 403 and 409.
    expectProblem(
      await call(DECIDE, { body: decisionOfSize(KIB64 + 1, g.approvalId), key, headers: { 'content-type': 'application/json' } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectProblem(await post({ approvalId: g.approvalId, decision: 'approve' }), 401, 'UNAUTHORIZED');
    expectProblem(await call(DECIDE, { body: '{', key, headers: { 'content-type': 'application/json' } }), 429, 'RATE_LIMITED');
    expectProblem(await post({ approvalId: g.approvalId, decision: 'maybe' }, key), 429, 'RATE_LIMITED');
    expectProblem(await post({ approvalId: UNKNOWN_ID, decision: 'approve' }, key), 429, 'RATE_LIMITED');
    expectProblem(await post({ approvalId: g.approvalId, decision: 'approve' }, a.memberKey.token), 429, 'RATE_LIMITED');
    expectProblem(await v1(`/approvals/${g.approvalId}/approve`, key, { json: {} }), 429, 'RATE_LIMITED');

    // The link answers an HTML 429 page, with the same headers.
    for (const query of [{ api_key: key }, { api_key: key, confirm: '1' }] as Record<string, string>[]) {
      const page = await link(g.approvalId, 'approve', query);
      expectPage(page, 429);
      expect(Number(page.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(page.headers.get('x-ratelimit-limit')).toBe('3');
    }
    await expectUntouched(g);
  });
});
