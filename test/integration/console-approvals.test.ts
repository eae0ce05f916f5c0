import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as approvalHandler } from '../../functions/http/console/approvals/approval.ts';
import { handler as decideHandler } from '../../functions/http/console/approvals/decide.ts';
import { handler as inboxHandler } from '../../functions/http/console/approvals/list.ts';
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
  opts: { method?: string; path: string; cookie: string; form?: Record<string, string> },
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
    ...(opts.form ? { body: new URLSearchParams({ csrf: csrfToken(opts.cookie), ...opts.form }).toString() } : {}),
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

/** A run waiting at an approval with a required form field. */
async function waitingApproval(title: string) {
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
            reviewers: ['role:admin'],
            form: [{ name: 'ticket', type: 'string', required: true }],
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
