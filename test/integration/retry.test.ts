import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as getHandler } from '../../functions/http/v1/executions/get.ts';
import { handler as retryHandler } from '../../functions/http/v1/executions/retry.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { decide } from '../../shared/domain/approvals.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { retryRun } from '../../shared/engine/retry-failed-run.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';

/**
 * Retry from the failed step (`POST /api/v1/executions/{id}/retry`): the run keeps its version,
 * variables and outputs; the steps before the failed one are not run again (a local listener counts
 * the calls of an http_request before the failing step); every refusal has its own 409 code.
 */

type Account = Awaited<ReturnType<typeof givenAccount>>;
const RETRY_LIMIT = 2;

// A local target: counts calls per path; `/flaky/<n>` answers 500 to its first call, 200 after.
let target: Server;
let base: string;
const calls = new Map<string, number>();
beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32', RETRY_LIMIT: String(RETRY_LIMIT) });
  target = createServer((req, res) => {
    const path = req.url ?? '/';
    const n = (calls.get(path) ?? 0) + 1;
    calls.set(path, n);
    req.resume();
    req.on('end', () => {
      const status = path.startsWith('/flaky/') && n === 1 ? 500 : 200;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ path, call: n }));
    });
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
});
afterAll(() => {
  target.closeAllConnections();
  target.close();
});

const retry = (token: string, executionId: string, headers: Record<string, string> = {}) =>
  invoke(
    retryHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/executions/${executionId}/retry`,
      headers: { ...bearer(token), ...headers },
      params: { executionId },
    }),
  );
const view = (token: string, executionId: string) =>
  invoke(getHandler, apiEvent({ path: `/api/v1/executions/${executionId}`, headers: bearer(token), params: { executionId } }));

const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const events = async (e: Pick<Execution, 'accountId' | 'executionId'>) => (await listEvents(e.accountId, e.executionId, 200)).items;

/** Run the run's pending message in-process (no poller in this file) and read it back. */
async function work(e: Pick<Execution, 'accountId' | 'executionId'>) {
  const before = await read(e);
  expect(before.dispatch, `run ${before.status} has no message to run`).toEqual(expect.any(String));
  await processRunMessage(
    { accountId: e.accountId, executionId: e.executionId, dispatch: before.dispatch as string },
    { remainingMs: () => 30_000 },
  );
  return read(e);
}

const newWorkflow = (a: Account, definition: unknown) =>
  createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'retry', definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] },
  );
const actor = (a: Account) => ({ accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' as const });

let a: Account;
beforeAll(async () => {
  a = await givenAccount();
});

describe('retry from the failed step', () => {
  it('re-enters the failed step with the run’s version, variables and outputs; the http_request before it is called once in total', async () => {
    const id = Math.random().toString(36).slice(2);
    const definition = {
      variables: { who: { type: 'string', default: 'ops' } },
      steps: [
        { id: 'prepare', type: 'set', values: { greeting: "{% 'hello ' & $vars.who %}" } },
        { id: 'before', type: 'http_request', method: 'POST', url: `${base}/before/${id}`, body: { n: 1 }, saveAs: 'first' },
        { id: 'flaky', type: 'http_request', method: 'POST', url: `${base}/flaky/${id}`, body: '{% $vars.first.body %}' },
        { id: 'after', type: 'set', values: { done: '{% $steps.flaky.body.call %}' } },
      ],
    };
    const workflow = await newWorkflow(a, definition);
    const { execution } = await startRun({ workflow, trigger: 'api', variables: { who: 'team' }, startedBy: a.admin.userId });

    const failed = await work(execution);
    expect(failed.status, JSON.stringify(failed.error)).toBe('FAILED');
    expect(failed.steps.map((s) => s.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'FAILED', 'PENDING']);
    expect(calls.get(`/before/${id}`)).toBe(1);
    expect(calls.get(`/flaky/${id}`)).toBe(1);

    // An edit after the failure: the retry still runs the version the run used.
    await updateWorkflow(actor(a), workflow.workflowId, {
      definition: WorkflowDefinition.parse({ steps: [{ id: 'other', type: 'fail', message: 'the new version' }] }),
    });

    const res = await retry(a.adminKey.token, execution.executionId);
    expect(res.status, res.body).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/executions/${execution.executionId}`);
    expect(res.json).toMatchObject({ executionId: execution.executionId, status: 'PENDING', retries: 1 });
    expect(res.json.error).toBeUndefined();
    expect(res.json.finishedAt).toBeUndefined();
    expect(res.json.steps[2]).toEqual({ stepId: 'flaky', type: 'http_request', status: 'PENDING', attempts: 2 });
    const pending = await read(execution);
    expect(pending).toMatchObject({ status: 'PENDING', workflowVersion: 1, retries: 1, nextStep: 2 });
    expect(pending.variables).toEqual(failed.variables);
    expect(pending.outputs).toEqual(failed.outputs);

    const done = await work(execution);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.workflowVersion).toBe(1);
    // Side effects before the failed step were not repeated; the failed step ran again.
    expect(calls.get(`/before/${id}`)).toBe(1);
    expect(calls.get(`/flaky/${id}`)).toBe(2);
    expect(done.variables).toMatchObject({ who: 'team', greeting: 'hello team', done: 2 });
    expect(done.outputs.before).toEqual(failed.outputs.before);
    expect(done.steps.map((s) => [s.stepId, s.status, s.attempts])).toEqual([
      ['prepare', 'SUCCEEDED', undefined],
      ['before', 'SUCCEEDED', undefined],
      ['flaky', 'SUCCEEDED', 2],
      ['after', 'SUCCEEDED', undefined],
    ]);

    // The earlier failure stays in the log, then the retry and the second attempt.
    const log = await events(execution);
    const types = log.map((e) => `${e.type}${e.data.stepId ? `:${e.data.stepId}` : ''}`);
    expect(types).toEqual([
      'execution.started',
      'step.started:prepare',
      'step.succeeded:prepare',
      'step.started:before',
      'step.succeeded:before',
      'step.started:flaky',
      'step.failed:flaky',
      'execution.failed',
      'execution.retried:flaky',
      'step.started:flaky',
      'step.succeeded:flaky',
      'step.started:after',
      'step.succeeded:after',
      'execution.succeeded',
    ]);
    const retried = log.find((e) => e.type === 'execution.retried');
    expect(retried?.data).toMatchObject({ by: a.admin.userId, stepId: 'flaky', retry: 1, previousError: failed.error });
    expect(log.filter((e) => e.type === 'step.started' && e.data.stepId === 'flaky').map((e) => e.data.attempt)).toEqual([undefined, 2]);

    // Finished again: a second retry is refused, the run is not FAILED.
    expectProblem(await retry(a.adminKey.token, execution.executionId), 409, 'EXECUTION_NOT_FAILED');
  });

  it('accepts an Idempotency-Key: the same key answers with the run as it is, and retries once', async () => {
    const id = Math.random().toString(36).slice(2);
    const workflow = await newWorkflow(a, { steps: [{ id: 'flaky', type: 'http_request', method: 'GET', url: `${base}/flaky/${id}` }] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    expect((await work(execution)).status).toBe('FAILED');

    expectProblem(
      await retry(a.adminKey.token, execution.executionId, { 'idempotency-key': 'bad key with spaces' }),
      400,
      'INVALID_IDEMPOTENCY_KEY',
    );
    const first = await retry(a.adminKey.token, execution.executionId, { 'idempotency-key': `k-${id}` });
    expect(first.status, first.body).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await retry(a.adminKey.token, execution.executionId, { 'idempotency-key': `k-${id}` });
    expect(again.status, again.body).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json).toMatchObject({ executionId: execution.executionId, status: 'PENDING', retries: 1 });
    // Without the key (or with another), the run in progress is refused.
    expectProblem(await retry(a.adminKey.token, execution.executionId, { 'idempotency-key': `other-${id}` }), 409, 'EXECUTION_NOT_FAILED');

    expect((await work(execution)).status).toBe('SUCCEEDED');
    expect((await events(execution)).filter((e) => e.type === 'execution.retried')).toHaveLength(1);
    expect(calls.get(`/flaky/${id}`)).toBe(2);
  });

  it('retries a webhook-started run, up to RETRY_LIMIT times, then 409 RETRY_LIMIT_REACHED', async () => {
    const workflow = await newWorkflow(a, {
      steps: [
        { id: 'one', type: 'set', values: { n: 1 } },
        { id: 'boom', type: 'fail', message: 'always', code: 'ALWAYS' },
      ],
    });
    // A webhook run starts by reference: the worker takes the version.
    const { execution } = await startRun({
      workflow: { accountId: a.account.accountId, workflowId: workflow.workflowId },
      trigger: 'webhook',
      variables: {},
    });
    expect((await work(execution)).error?.code).toBe('ALWAYS');
    for (let n = 1; n <= RETRY_LIMIT; n++) {
      // After the first retry, each further one names itself with a new key.
      const res = await retry(
        a.memberKey.token,
        execution.executionId,
        n > 1 ? { 'idempotency-key': `again-${n}-${execution.executionId}` } : {},
      );
      expect(res.status, res.body).toBe(202);
      expect(res.json).toMatchObject({ trigger: 'webhook', retries: n });
      const again = await work(execution);
      expect(again.status).toBe('FAILED');
      expect(again.steps[1]).toMatchObject({ status: 'FAILED', attempts: n + 1 });
    }
    expectProblem(
      await retry(a.memberKey.token, execution.executionId, { 'idempotency-key': `last-${execution.executionId}` }),
      409,
      'RETRY_LIMIT_REACHED',
    );
    const seen = await view(a.memberKey.token, execution.executionId);
    expect(seen.json).toMatchObject({ status: 'FAILED', retries: RETRY_LIMIT });
  });

  it('a retry without a new Idempotency-Key that arrives after the run was retried and failed again is 409 ALREADY_RETRIED; a new key retries it', async () => {
    const workflow = await newWorkflow(a, { steps: [{ id: 'boom', type: 'fail', message: 'always', code: 'ALWAYS' }] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    expect((await work(execution)).status).toBe('FAILED');
    expect((await retry(a.adminKey.token, execution.executionId)).status).toBe(202);
    expect((await work(execution)).status).toBe('FAILED');
    // The same request again (a client's resend, a concurrent duplicate that lost the race): refused.
    expectProblem(await retry(a.adminKey.token, execution.executionId), 409, 'ALREADY_RETRIED');
    expect(await read(execution)).toMatchObject({ status: 'FAILED', retries: 1 });
    const again = await retry(a.adminKey.token, execution.executionId, { 'idempotency-key': `second-${execution.executionId}` });
    expect(again.status, again.body).toBe(202);
    expect(again.json).toMatchObject({ retries: 2 });
  });

  it('ten concurrent retries of a fast-failing run move it once, however fast it fails again', async () => {
    const workflow = await newWorkflow(a, { steps: [{ id: 'boom', type: 'fail', message: 'always', code: 'ALWAYS' }] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    expect((await work(execution)).status).toBe('FAILED');
    // A worker as fast as can be: it runs the retried run to FAILED again as soon as it is PENDING.
    let stop = false;
    const worker = (async () => {
      while (!stop) {
        const e = await read(execution);
        if (e.status === 'PENDING') await work(execution);
      }
    })();
    const answers = await Promise.all(Array.from({ length: 10 }, () => retry(a.memberKey.token, execution.executionId)));
    stop = true;
    await worker;
    const settled = await read(execution);
    if (settled.status === 'PENDING') await work(execution);
    expect(answers.filter((r) => r.status === 202)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 202)) expect(['EXECUTION_NOT_FAILED', 'ALREADY_RETRIED']).toContain(r.json.code);
    expect(await read(execution)).toMatchObject({ status: 'FAILED', retries: 1 });
    expect((await events(execution)).filter((e) => e.type === 'execution.retried')).toHaveLength(1);
  });

  it('refuses a run that failed because its approval was rejected (409 EXECUTION_REJECTED)', async () => {
    const workflow = await newWorkflow(a, { steps: [{ id: 'ok', type: 'manual_approval', title: 'Go?', reviewers: ['role:admin'] }] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    const waiting = await work(execution);
    expect(waiting.status).toBe('WAITING_APPROVAL');
    await decide({
      principal: { kind: 'apiKey', accountId: a.account.accountId, userId: a.admin.userId, keyId: a.adminKey.id } as never,
      approvalId: waiting.approvalId as string,
      decision: 'reject',
      channel: 'v1',
      sourceIp: '203.0.113.9',
    });
    const rejected = await work(execution);
    expect(rejected.error?.code).toBe('APPROVAL_REJECTED');
    expectProblem(await retry(a.adminKey.token, execution.executionId), 409, 'EXECUTION_REJECTED');
  });

  it('refuses a run that failed before its first step (409 EXECUTION_FAILED_BEFORE_FIRST_STEP)', async () => {
    const { execution } = await startRun({
      workflow: { accountId: a.account.accountId, workflowId: 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz' },
      trigger: 'webhook',
      variables: {},
    });
    const failed = await work(execution);
    expect(failed.error?.code).toBe('WORKFLOW_NOT_FOUND');
    expectProblem(await retry(a.adminKey.token, execution.executionId), 409, 'EXECUTION_FAILED_BEFORE_FIRST_STEP');
  });

  it('refuses runs in progress and past retention; answers 404 for unknown and other accounts’ runs; needs WORKFLOW_EXECUTE', async () => {
    const workflow = await newWorkflow(a, { steps: [{ id: 'boom', type: 'fail', message: 'no' }] });
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    expectProblem(await retry(a.adminKey.token, execution.executionId), 409, 'EXECUTION_NOT_FAILED');
    const failed = await work(execution);
    expect(failed.status).toBe('FAILED');

    const later = (failed.finishedAt as number) + 91 * 86_400_000;
    await expect(retryRun(a.account.accountId, execution.executionId, { userId: a.admin.userId }, undefined, later)).rejects.toMatchObject({
      kind: 'conflict',
      code: 'RETENTION_EXPIRED',
    });

    const other = await givenAccount();
    expectProblem(await retry(other.adminKey.token, execution.executionId), 404, 'EXECUTION_NOT_FOUND');
    expectProblem(await retry(a.adminKey.token, 'ex_01jzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'EXECUTION_NOT_FOUND');
    const readOnly = (
      await createKey(
        { accountId: a.account.accountId, userId: a.admin.userId },
        { name: 'ro', scopes: ['WORKFLOW_READ'] as Scope[], validityDays: 1 },
      )
    ).token;
    expectProblem(await retry(readOnly, execution.executionId), 403, 'INSUFFICIENT_SCOPE');
    // None of the refusals changed the run.
    expect(await read(execution)).toEqual(failed);
  });
});
