import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as approvalHandler } from '../../functions/http/console/approvals/approval.ts';
import { handler as decideHandler } from '../../functions/http/console/approvals/decide.ts';
import { handler as inboxHandler } from '../../functions/http/console/approvals/list.ts';
import { handler as overviewHandler } from '../../functions/http/console/overview.ts';
import { handler as runHandler } from '../../functions/http/console/runs/run.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { sweepRestart } from '../../shared/engine/recovery.ts';
import { resumeRun } from '../../shared/engine/resume.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * A run waiting at its approval, from the console (issue 44, item 3): its page links to the approval
 * ("Decide"); once the run is INTERRUPTED (a restart while it waited) the approval's page says what a
 * decision does then (it is recorded, and the run takes it when resumed), which the resume then shows.
 * On a table of its own: the restart sweep interrupts every active run it finds.
 */

type Result = { statusCode: number; headers?: Record<string, string>; body?: string };
const page = async (
  handler: (e: never, c: never) => Promise<unknown>,
  path: string,
  cookie: string,
  params: Record<string, string>,
  form?: Record<string, string>,
) => {
  const [bare, qs] = path.split('?') as [string, string | undefined];
  const event = apiEvent({
    method: form ? 'POST' : 'GET',
    path: bare,
    ...(qs ? { query: Object.fromEntries(new URLSearchParams(qs)) } : {}),
    params,
    headers: { 'sec-fetch-site': 'same-origin', ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(form ? { body: new URLSearchParams({ csrf: csrfToken(cookie), ...form }).toString() } : {}),
    sourceIp: freshIp(),
  });
  event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};

let stopWorkers: () => Promise<unknown>;
let a: Awaited<ReturnType<typeof givenAccount>>;
let admin: string;
beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues();
  stopWorkers = startWorkers();
  a = await givenAccount();
  admin = await sessionOf(a.admin.email);
}, 120_000);
afterAll(async () => stopWorkers?.());

const read = (id: string) => getExecution(a.account.accountId, id) as Promise<Execution>;

describe('a run waiting at its approval', () => {
  it('its page links to the approval ("Decide"); interrupted, the approval says a decision waits for the resume, which takes it', async () => {
    const workflow = await createWorkflow(
      { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
      {
        name: 'waits',
        definition: WorkflowDefinition.parse({
          steps: [
            { id: 'approve', type: 'manual_approval', title: 'Ship it?', reviewers: ['role:admin'] },
            { id: 'after', type: 'set', values: { shipped: true } },
          ],
        }),
        recovery: false,
        editors: [],
      },
    );
    // A webhook's run: the restart sweep interrupts those (an API run of a workflow with recovery would resume).
    const { execution } = await startRun({ workflow, trigger: 'webhook', variables: {} });
    const id = execution.executionId;
    const waiting = await eventually(
      () => read(id),
      (e) => e.status === 'WAITING_APPROVAL',
      30_000,
    );
    const approvalId = waiting.approvalId as string;

    const run = await page(runHandler, `/console/runs/${id}`, admin, { executionId: id });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.body).toMatch(new RegExp(`<a class="link-button" href="/console/approvals/${approvalId}">Decide</a>`));
    const approval = await page(approvalHandler, `/console/approvals/${approvalId}`, admin, { approvalId });
    expect(approval.body).not.toContain('id="run-interrupted"');
    const inbox = (all: boolean) => page(inboxHandler, `/console/approvals${all ? '?all=1' : ''}`, admin, {}).then((r) => r.body ?? '');
    expect(await inbox(false)).toContain(`/console/approvals/${approvalId}`);
    // The navigation's count "Approvals 1" on the inbox and the overview, and the overview's list, count it.
    const overview = () => page(overviewHandler, '/console', admin, {}).then((r) => r.body ?? '');
    const COUNTED = '<span class="nav-count">1</span>';
    expect(await inbox(false)).toContain(COUNTED);
    expect(await overview()).toContain(COUNTED);
    expect(await overview()).toContain(`/console/approvals/${approvalId}`);

    // A restart while it waited: INTERRUPTED, no Decide on its page; the approval's page says what deciding does.
    await sweepRestart({ rule: 'all' });
    expect((await read(id)).status).toBe('INTERRUPTED');
    expect((await page(runHandler, `/console/runs/${id}`, admin, { executionId: id })).body).not.toContain('>Decide</a>');
    const warned = await page(approvalHandler, `/console/approvals/${approvalId}`, admin, { approvalId });
    expect(warned.body).toContain('id="run-interrupted"');
    expect(warned.body).toContain('a decision made now is recorded, and the run takes it when it is resumed from');
    expect(warned.body).toContain(`<a href="/console/runs/${id}">its page</a>`);
    // It waits for the resume, not for a reviewer: out of "waiting for you", marked in "all pending".
    expect(await inbox(false)).not.toContain(`/console/approvals/${approvalId}`);
    // Nor counted by the navigation, on the inbox or the overview, nor listed by the overview.
    expect(await inbox(false)).not.toContain('class="nav-count"');
    expect(await overview()).not.toContain('class="nav-count"');
    expect(await overview()).not.toContain(`/console/approvals/${approvalId}`);
    expect(await inbox(true)).toMatch(new RegExp(`/console/runs/${id}"[^>]*>[^<]*</a><span class="muted"> \\(run interrupted\\)</span>`));

    // As it says: the decision is recorded, the run stays INTERRUPTED; resumed, it takes it and succeeds.
    const decided = await page(decideHandler, `/console/approvals/${approvalId}`, admin, { approvalId }, { decision: 'approve' });
    expect(decided.statusCode, decided.body).toBe(303);
    expect((await getApproval(a.account.accountId, approvalId))?.status).toBe('APPROVED');
    expect((await read(id)).status).toBe('INTERRUPTED');
    await resumeRun(a.account.accountId, id, a.admin.userId);
    expect(
      (
        await eventually(
          () => read(id),
          (e) => e.status === 'SUCCEEDED' || e.status === 'FAILED',
          30_000,
        )
      ).status,
    ).toBe('SUCCEEDED');
  }, 120_000);
});
