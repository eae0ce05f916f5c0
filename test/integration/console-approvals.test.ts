import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as approvalHandler } from '../../functions/http/console/approvals/approval.ts';
import { handler as decideHandler } from '../../functions/http/console/approvals/decide.ts';
import { handler as inboxHandler } from '../../functions/http/console/approvals/list.ts';
import { handler as decideManyHandler } from '../../functions/http/console/approvals/decide-many.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { type Approval, getApproval, listAudit } from '../../shared/db/entities/approval.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { instrumentClients, recordCalls, sequentialSteps } from '../bench/counting.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * The console's approval pages through their handlers in-process on the emulators: what each page view
 * costs in SDK calls (the figures in the report: a page's reads do not grow with its rows), and the
 * form's refusals (a required field left empty, a decision that is neither) as pages that change nothing.
 */

type Result = { statusCode: number; headers?: Record<string, string>; body?: string };
const call = async (
  handler: (e: never, c: never) => Promise<unknown>,
  opts: { method?: string; path: string; cookie: string; form?: Record<string, string> | [string, string][] },
) => {
  const [path, qs] = opts.path.split('?') as [string, string | undefined];
  const approvalId = /^\/console\/approvals\/([^/]+)$/.exec(path)?.[1];
  const event = apiEvent({
    method: opts.method ?? 'GET',
    path,
    ...(qs ? { query: Object.fromEntries(new URLSearchParams(qs)) } : {}),
    ...(approvalId ? { params: { approvalId } } : {}),
    headers: {
      'sec-fetch-site': 'same-origin',
      ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(opts.form
      ? {
          body: new URLSearchParams([
            ['csrf', csrfToken(opts.cookie)],
            ...(Array.isArray(opts.form) ? opts.form : Object.entries(opts.form)),
          ]).toString(),
        }
      : {}),
    sourceIp: freshIp(),
  });
  event.cookies = [`flowgate_session=${opts.cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const counted = async (handler: (e: never, c: never) => Promise<unknown>, opts: Parameters<typeof call>[1]) => {
  const { result, calls } = await recordCalls(() => call(handler, opts));
  const db = calls.filter((c) => c.service === 'dynamodb');
  return {
    result,
    calls: db.length,
    steps: sequentialSteps(db).length,
    path: sequentialSteps(db)
      .map((s) => s.map((c) => c.command).join('‖'))
      .join(' → '),
  };
};

let stopWorkers: () => Promise<unknown>;
let a: Awaited<ReturnType<typeof givenAccount>>;
let admin: string;
const pending: { approvalId: string; executionId: string }[] = [];

/** A run waiting at an approval with a required form field (or, `form: false`, none), with a deadline when `timeoutSeconds`. */
async function waitingApproval(title: string, opts: { form?: boolean; timeoutSeconds?: number; reviewers?: string[] } = {}) {
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    {
      name: `console approvals ${title}`,
      definition: WorkflowDefinition.parse({
        variables: { env: { type: 'string', default: 'staging' } },
        steps: [
          {
            id: 'approve',
            type: 'manual_approval',
            title,
            reviewers: opts.reviewers ?? ['role:admin'],
            ...(opts.form === false ? {} : { form: [{ name: 'ticket', type: 'string', required: true }] }),
            ...(opts.timeoutSeconds ? { timeoutSeconds: opts.timeoutSeconds } : {}),
          },
        ],
      }),
      recovery: false,
      editors: [],
    },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables: { env: 'production' }, startedBy: a.admin.userId });
  const run = await eventually(
    () => getExecution(a.account.accountId, execution.executionId) as Promise<Execution>,
    (e) => e.status === 'WAITING_APPROVAL' || e.status === 'FAILED',
    30_000,
  );
  expect(run.status).toBe('WAITING_APPROVAL');
  return { approvalId: run.approvalId as string, executionId: execution.executionId };
}

beforeAll(async () => {
  await useOwnQueues();
  stopWorkers = startWorkers();
  await instrumentClients();
  a = await givenAccount();
  admin = await sessionOf(a.admin.email);
  for (const t of ['one', 'two', 'three']) pending.push(await waitingApproval(`Approval ${t}`));
}, 120_000);
afterAll(async () => stopWorkers?.());

describe('what an approval page view costs', () => {
  it('the inbox: the session, the status listing (its shards in one step), the page of approvals, one BatchGet of their runs and workflows', async () => {
    const one = await counted(inboxHandler, { path: '/console/approvals', cookie: admin });
    expect(one.result.statusCode, one.result.body).toBe(200);
    for (const p of pending) expect(one.result.body).toContain(`/console/approvals/${p.approvalId}`);
    // GetItem (session) → GetItem‖GetItem (user, account) → Query × (16 shards + the listing of before) → BatchGetItem (approvals) → BatchGetItem (runs, workflows).
    expect(one.steps, one.path).toBe(5);
    expect(one.path).toMatch(/^GetItem → GetItem‖GetItem → (Query‖)+Query → BatchGetItem → BatchGetItem$/);
    console.info(`inbox (${pending.length} rows): ${one.calls} DynamoDB calls in ${one.steps} steps`);
    // More rows, not more calls.
    const all = await counted(inboxHandler, { path: '/console/approvals?all=1', cookie: admin });
    expect(all.result.statusCode).toBe(200);
    expect(all.calls).toBe(one.calls);
  });

  it("an approval's page: the session, the approval and its history together, one BatchGet of its run, workflow and people", async () => {
    const p = pending[0] as (typeof pending)[number];
    const view = await counted(approvalHandler, { path: `/console/approvals/${p.approvalId}`, cookie: admin });
    expect(view.result.statusCode, view.result.body).toBe(200);
    expect(view.result.body).toContain('env: &quot;production&quot;');
    expect(view.path).toBe('GetItem → GetItem‖GetItem → GetItem‖Query → BatchGetItem');
    console.info(`approval page: ${view.calls} DynamoDB calls in ${view.steps} steps`);
  });

  it('a decision: the session, the approval (for its form), the decision, then 303', async () => {
    const p = pending[2] as (typeof pending)[number];
    const post = await counted(decideHandler, {
      method: 'POST',
      path: `/console/approvals/${p.approvalId}`,
      cookie: admin,
      form: { decision: 'approve', 'field.ticket': 'CHG-1', comment: 'ok' },
    });
    expect(post.result.statusCode, post.result.body).toBe(303);
    expect(post.result.headers?.location).toBe(`/console/approvals/${p.approvalId}`);
    // decide reads the approval again (its own read, as for every channel): the reviewer check needs no user read.
    expect(post.path).toBe('GetItem → GetItem‖GetItem → GetItem → GetItem → TransactWriteItems');
    console.info(`decision POST: ${post.calls} DynamoDB calls in ${post.steps} steps (+ the run's message)`);
    expect((await getApproval(a.account.accountId, p.approvalId))?.status).toBe('APPROVED');
  });
});

describe("the approval page's refusals", () => {
  it('a required field left empty is a 400 page with the field marked, audited as refused; the run still waits', async () => {
    const p = pending[1] as (typeof pending)[number];
    const res = await call(decideHandler, {
      method: 'POST',
      path: `/console/approvals/${p.approvalId}`,
      cookie: admin,
      form: { decision: 'approve', 'field.ticket': '', comment: 'kept' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.body).toContain('Check the form: nothing was recorded.');
    expect(res.body).toContain('is required');
    expect(res.body).toMatch(/<input[^>]*aria-invalid="true"/);
    // What was typed is kept.
    expect(res.body).toContain('>kept</textarea>');
    const approval = (await getApproval(a.account.accountId, p.approvalId)) as Approval;
    expect(approval.status).toBe('PENDING');
    expect(await listAudit(a.account.accountId, p.approvalId)).toEqual([
      expect.objectContaining({ outcome: 'refused', status: 400, code: 'VALIDATION_FAILED', channel: 'console' }),
    ]);
  });

  it('a decision that is neither approve nor reject is a 400 page and records nothing', async () => {
    const p = pending[1] as (typeof pending)[number];
    const before = await listAudit(a.account.accountId, p.approvalId);
    const res = await call(decideHandler, {
      method: 'POST',
      path: `/console/approvals/${p.approvalId}`,
      cookie: admin,
      form: { decision: 'maybe' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.body).toContain('Choose &quot;Approve&quot; or &quot;Reject&quot;.');
    expect(await listAudit(a.account.accountId, p.approvalId)).toEqual(before);
    expect((await getApproval(a.account.accountId, p.approvalId))?.status).toBe('PENDING');
  });
});

/** The inbox's POST: a row's button (`approve`/`reject` = id) or the selected ones (`approvalId`… with `decision`). */
const bulk = (cookie: string, form: [string, string][]) =>
  call(decideManyHandler, { method: 'POST', path: '/console/approvals', cookie, form });
const decidedEntries = async (approvalId: string) =>
  (await listAudit(a.account.accountId, approvalId)).filter((h) => h.outcome === 'decided');
/** The summary a bulk decision redirects to, as its query. */
const summaryOf = (res: Result) => Object.fromEntries(new URL(res.headers?.location ?? '', 'http://x').searchParams);

describe('deciding from the inbox', () => {
  it('"Approve selected" on two approvals records two decisions and two audit entries, and says so on the inbox', async () => {
    const one = await waitingApproval('Bulk one', { form: false });
    const two = await waitingApproval('Bulk two', { form: false });
    const inbox = await call(inboxHandler, { path: '/console/approvals', cookie: admin });
    expect(inbox.statusCode).toBe(200);
    for (const p of [one, two]) expect(inbox.body).toContain(`name="approvalId" value="${p.approvalId}"`);

    const cost = await counted(decideManyHandler, {
      method: 'POST',
      path: '/console/approvals',
      cookie: admin,
      form: [
        ['approvalId', one.approvalId],
        ['approvalId', two.approvalId],
        ['approvalId', one.approvalId],
        ['decision', 'approve'],
        ['sort', 'deadline'],
      ],
    });
    const res = cost.result;
    expect(res.statusCode, res.body).toBe(303);
    // Each approval as the approval page's POST decides it (its read for the form, decide's read, the transaction), side by side.
    // The session's three reads, then per approval two GetItems and a TransactWriteItems; the approvals side by side, so
    // no more sequential steps than one (how the emulator's timings group them varies).
    expect(cost.calls, cost.path).toBe(3 + 2 * 3);
    expect(cost.steps, cost.path).toBeLessThanOrEqual(5);
    expect(cost.path).not.toMatch(/Query|Scan/);
    console.info(`bulk decision of 2: ${cost.calls} DynamoDB calls in ${cost.steps} steps (+ each run's message)`);
    // Back to the inbox, its order kept, with what happened (a duplicate id is one approval).
    expect(res.headers?.location).toBe('/console/approvals?sort=deadline&done=1&approved=2');
    for (const p of [one, two]) {
      expect(await getApproval(a.account.accountId, p.approvalId)).toMatchObject({ status: 'APPROVED', decidedBy: a.admin.userId });
      expect(await decidedEntries(p.approvalId)).toEqual([
        expect.objectContaining({ decision: 'approve', channel: 'console', userId: a.admin.userId }),
      ]);
    }
    const after = await call(inboxHandler, { path: res.headers?.location as string, cookie: admin });
    expect(after.statusCode).toBe(200);
    expect(after.body).toContain('2 approved.');
    expect(after.body).not.toContain(`value="${one.approvalId}"`);
  });

  it('a bulk decision with an already decided approval reports it and changes nothing for it', async () => {
    const done = await waitingApproval('Decided before', { form: false });
    const open = await waitingApproval('Still open', { form: false });
    expect((await bulk(admin, [['reject', done.approvalId]])).headers?.location).toBe('/console/approvals?done=1&rejected=1');
    const before = await getApproval(a.account.accountId, done.approvalId);
    expect(before).toMatchObject({ status: 'REJECTED' });

    const res = await bulk(admin, [
      ['approvalId', done.approvalId],
      ['approvalId', open.approvalId],
      ['decision', 'approve'],
    ]);
    expect(summaryOf(res)).toEqual({ done: '1', approved: '1', handled: '1' });
    expect(await getApproval(a.account.accountId, done.approvalId)).toEqual(before);
    expect((await decidedEntries(done.approvalId)).map((h) => h.decision)).toEqual(['reject']);
    expect(await getApproval(a.account.accountId, open.approvalId)).toMatchObject({ status: 'APPROVED' });
    const page = await call(inboxHandler, { path: res.headers?.location as string, cookie: admin });
    expect(page.body).toContain('1 approved, 1 already decided: nothing changed for it.');
  });

  it('a member who does not review an approval cannot decide it through the inbox form: refused, nothing changes', async () => {
    const theirs = await waitingApproval('Admins only', { form: false });
    const member = await sessionOf(a.member.email);
    const inbox = await call(inboxHandler, { path: '/console/approvals', cookie: member });
    expect(inbox.statusCode).toBe(200);
    expect(inbox.body).not.toContain(theirs.approvalId);
    for (const form of [
      [
        ['approvalId', theirs.approvalId],
        ['decision', 'approve'],
      ],
      [['reject', theirs.approvalId]],
      // An admin-only scope asked for by a member is not where the answer goes.
      [
        ['approvalId', theirs.approvalId],
        ['decision', 'reject'],
        ['all', '1'],
      ],
    ] as [string, string][][]) {
      const res = await bulk(member, form);
      expect(res.statusCode, res.body).toBe(303);
      expect(summaryOf(res)).toEqual({ done: '1', refused: '1' });
    }
    expect(await getApproval(a.account.accountId, theirs.approvalId)).toMatchObject({ status: 'PENDING' });
    expect(await decidedEntries(theirs.approvalId)).toEqual([]);
    // Another account's approval, or no approval: the same.
    const elsewhere = await givenAccount();
    const res = await bulk(await sessionOf(elsewhere.admin.email), [
      ['approvalId', theirs.approvalId],
      ['approvalId', 'not an id'],
      ['decision', 'reject'],
    ]);
    expect(summaryOf(res)).toEqual({ done: '1', refused: '2' });
    expect(await getApproval(a.account.accountId, theirs.approvalId)).toMatchObject({ status: 'PENDING' });
  });

  it('an approval whose form has a required field is left out of "Approve selected" (nothing tried); "Reject selected" rejects it', async () => {
    const formed = await waitingApproval('Needs a ticket');
    const inbox = await call(inboxHandler, { path: '/console/approvals', cookie: admin });
    expect(inbox.body).toContain(`href="/console/approvals/${formed.approvalId}">Needs its form: open it`);
    expect(inbox.body).not.toContain(`name="approve" value="${formed.approvalId}"`);
    const approve = await bulk(admin, [
      ['approvalId', formed.approvalId],
      ['decision', 'approve'],
    ]);
    expect(summaryOf(approve)).toEqual({ done: '1', needsform: '1' });
    expect(await listAudit(a.account.accountId, formed.approvalId)).toEqual([]);
    expect(await getApproval(a.account.accountId, formed.approvalId)).toMatchObject({ status: 'PENDING' });
    const reject = await bulk(admin, [
      ['approvalId', formed.approvalId],
      ['decision', 'reject'],
    ]);
    expect(summaryOf(reject)).toEqual({ done: '1', rejected: '1' });
    expect(await getApproval(a.account.accountId, formed.approvalId)).toMatchObject({ status: 'REJECTED' });
  });

  it('refuses a form that decides nothing known, or too much, as a 400 page; nothing selected says so', async () => {
    const neither = await bulk(admin, [['approvalId', pending[1]?.approvalId as string]]);
    expect(neither.statusCode).toBe(400);
    const many = await bulk(admin, [
      ...Array.from({ length: 51 }, (_, i) => ['approvalId', `ap_${String(i).padStart(26, '0')}`] as [string, string]),
      ['decision', 'reject'],
    ]);
    expect(many.statusCode).toBe(400);
    expect(many.body).toContain('at most 50 approvals at once');
    const none = await bulk(admin, [['decision', 'approve']]);
    expect(none.headers?.location).toBe('/console/approvals?done=1');
    expect((await call(inboxHandler, { path: '/console/approvals?done=1', cookie: admin })).body).toContain(
      'Nothing was selected: nothing was decided.',
    );
    expect((await getApproval(a.account.accountId, pending[1]?.approvalId as string))?.status).toBe('PENDING');
  });
});

describe('the inbox by deadline', () => {
  it('sort=deadline puts the soonest deadline first and approvals without one last; a bad sort is a 400 page', async () => {
    const late = await waitingApproval('Deadline late', { form: false, timeoutSeconds: 7200 });
    const none = await waitingApproval('Deadline none', { form: false });
    const soon = await waitingApproval('Deadline soon', { form: false, timeoutSeconds: 600 });
    const order = (body: string | undefined) =>
      [late, none, soon]
        .map((p) => ({ p, at: (body ?? '').indexOf(`href="/console/approvals/${p.approvalId}"`) }))
        .sort((x, y) => x.at - y.at)
        .map(({ p }) => p);
    const oldest = await call(inboxHandler, { path: '/console/approvals', cookie: admin });
    expect(order(oldest.body)).toEqual([late, none, soon]);
    const byDeadline = await counted(inboxHandler, { path: '/console/approvals?sort=deadline', cookie: admin });
    expect(byDeadline.result.statusCode).toBe(200);
    expect(order(byDeadline.result.body)).toEqual([soon, late, none]);
    expect(byDeadline.result.body).toMatch(
      /aria-current="page"[^>]*>Deadline soonest|href="\/console\/approvals\?sort=deadline" aria-current="page"/,
    );
    // The same reads as the oldest-first page.
    expect(byDeadline.path).toMatch(/^GetItem → GetItem‖GetItem → (Query‖)+Query → BatchGetItem → BatchGetItem$/);
    for (const bad of ['sort=newest', 'sort=', 'approved=x', 'done=2']) {
      const res = await call(inboxHandler, { path: `/console/approvals?${bad}`, cookie: admin });
      expect(res.statusCode, bad).toBe(400);
    }
  });

  it("the navigation counts the approvals waiting for me on the inbox and the overview, as the overview's list does", async () => {
    const { pendingFor } = await import('../../shared/domain/pending-for-me.ts');
    const mine = await pendingFor({ accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' });
    expect(mine.items.length).toBeGreaterThan(0);
    const inbox = await call(inboxHandler, { path: '/console/approvals', cookie: admin });
    const count = /<span class="nav-count">(\d+\+?)<\/span><span class="visually-hidden"> waiting for you<\/span>/.exec(inbox.body ?? '');
    expect(count?.[1]).toBe(String(mine.items.length));
  });
});
