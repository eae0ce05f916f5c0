import { createServer, type IncomingMessage, type Server } from 'node:http';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as runWorker } from '../../functions/worker/execute.ts';
import { storage } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { getApproval } from '../../shared/db/entities/approval.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { listArtifacts } from '../../shared/db/entities/artifact.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { artifactDownload, executionResult } from '../../shared/domain/executions.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { givenAccount } from '../support/fixtures.ts';
import { eventually, resumeAfterDecision, startWorkers, takeRunMessages, useOwnQueues } from '../support/engine.ts';

// A local HTTP target for http_request steps: counts hits per path; /slow never answers.
let target: Server;
let base: string;
const hits = new Map<string, number>();
const bodies: string[] = [];
beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  target = createServer((req: IncomingMessage, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      bodies.push(body);
      if (path.startsWith('/slow')) return; // never answers
      if (path.startsWith('/status/')) return void res.writeHead(Number(path.split('/')[2])).end('nope');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: true, path, echo: body ? JSON.parse(body) : null }));
    });
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
});
afterAll(() => {
  target.closeAllConnections();
  target.close();
});

async function givenRun(definition: unknown, variables: Record<string, unknown> = {}) {
  const { account, admin } = await givenAccount();
  const workflow = await createWorkflow(
    { accountId: account.accountId, userId: admin.userId, role: 'admin' },
    { name: 'test', definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables, startedBy: admin.userId });
  return { account, admin, workflow, execution };
}

const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const settled = (e: Pick<Execution, 'accountId' | 'executionId'>, statuses: string[]) =>
  eventually(
    () => read(e),
    (x) => statuses.includes(x.status),
  );
const eventTypes = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100)).items.map((ev) => ev.type);

describe('the worker on the real queue', () => {
  let stop: () => Promise<unknown>;
  beforeAll(() => {
    stop = startWorkers();
  });
  afterAll(() => stop());

  it('runs set, when, http_request and artifact steps to SUCCEEDED with output, events and a downloadable artifact', async () => {
    const { execution } = await givenRun(
      {
        variables: { env: { type: 'string', default: 'staging' }, amount: { type: 'number', default: 5 } },
        steps: [
          { id: 'prepare', type: 'set', values: { summary: "{% 'Deploy to ' & $vars.env %}", double: '{% $vars.amount * 2 %}' } },
          { id: 'never', type: 'set', when: '{% $vars.amount > 100 %}', values: { big: true } },
          {
            id: 'call',
            type: 'http_request',
            method: 'POST',
            url: `${base}/hook`,
            body: '{% { "summary": $vars.summary } %}',
            saveAs: 'hook',
          },
          {
            id: 'report',
            type: 'artifact',
            name: 'report.json',
            content: '{% { "summary": $vars.summary, "status": $vars.hook.status } %}',
          },
        ],
        output: '{% { "summary": $vars.summary, "double": $vars.double, "echo": $steps.call.body.echo } %}',
      },
      { env: 'production' },
    );
    const done = await settled(execution, ['SUCCEEDED', 'FAILED']);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.steps.map((s) => [s.stepId, s.status])).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['never', 'SKIPPED'],
      ['call', 'SUCCEEDED'],
      ['report', 'SUCCEEDED'],
    ]);
    expect(done.variables).toMatchObject({ env: 'production', amount: 5, summary: 'Deploy to production', double: 10 });
    expect(done.variables).not.toHaveProperty('big');
    const result = await executionResult(done.accountId, done.executionId);
    expect(result).toMatchObject({
      status: 'SUCCEEDED',
      output: { summary: 'Deploy to production', double: 10, echo: { summary: 'Deploy to production' } },
      error: null,
    });
    expect(await eventTypes(done)).toEqual([
      'execution.started',
      'step.started',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'execution.succeeded',
    ]);

    const [artifact] = await listArtifacts(done.accountId, done.executionId);
    expect(artifact).toMatchObject({
      name: 'report.json',
      contentType: 'application/json',
      stepId: 'report',
      objectKey: `${done.accountId}/${done.executionId}/${artifact?.artifactId}`,
    });
    const link = await artifactDownload(done.accountId, done.executionId, artifact?.artifactId as string);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain('attachment; filename="report.json"');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.toString()).toBe(JSON.stringify({ summary: 'Deploy to production', status: 200 }));
    expect(bytes.length).toBe(artifact?.size);
    const stored = await (await storage()).send(new GetObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key: artifact?.objectKey }));
    expect(Buffer.from(await (stored.Body as { transformToByteArray: () => Promise<Uint8Array> }).transformToByteArray())).toEqual(bytes);
  });

  it('fails the run at a fail step, at a non-2xx response, and at a private address with no connection', async () => {
    const failStep = await givenRun({
      steps: [{ id: 'stop', type: 'fail', message: "{% 'too big: ' & $string(41 + 1) %}", code: 'TOO_BIG' }],
    });
    expect((await settled(failStep.execution, ['FAILED'])).error).toEqual({ code: 'TOO_BIG', message: 'too big: 42' });
    expect((await executionResult(failStep.account.accountId, failStep.execution.executionId)).error).toEqual({
      code: 'TOO_BIG',
      message: 'too big: 42',
    });

    const status = await givenRun({
      steps: [
        { id: 'tolerated', type: 'http_request', url: `${base}/status/503`, allowFailure: true },
        { id: 'strict', type: 'http_request', url: `${base}/status/404` },
        { id: 'after', type: 'set', values: { reached: true } },
      ],
    });
    const failed = await settled(status.execution, ['FAILED', 'SUCCEEDED']);
    expect(failed.steps.map((s) => s.status)).toEqual(['FAILED', 'FAILED', 'PENDING']);
    expect(failed.error?.code).toBe('HTTP_STATUS');
    expect(failed.variables).not.toHaveProperty('reached');

    const before = hits.size;
    const forbidden = await givenRun({ steps: [{ id: 'ssrf', type: 'http_request', url: 'http://127.0.0.2:9/latest/meta-data' }] });
    const denied = await settled(forbidden.execution, ['FAILED']);
    expect(denied.error?.code).toBe('TARGET_FORBIDDEN');
    expect(hits.size).toBe(before);
  });

  it('stops a runaway expression by its budget and fails the step, not the worker', async () => {
    const runaway = await givenRun({
      steps: [{ id: 'loop', type: 'set', values: { x: '{% ($f := function($n){ $f($n + 1) }; $f(0)) %}' } }],
    });
    const failed = await settled(runaway.execution, ['FAILED']);
    expect(failed.error?.code).toBe('EXPRESSION_FAILED');
    // The worker is still healthy: a following run completes.
    const next = await givenRun({ steps: [{ id: 'ok', type: 'set', values: { y: 1 } }] });
    expect((await settled(next.execution, ['SUCCEEDED'])).variables).toMatchObject({ y: 1 });
  });

  it('fails a step whose variables and outputs outgrow 256 KiB', async () => {
    const big = await givenRun({
      steps: [{ id: 'grow', type: 'set', values: { blob: "{% $pad('', 200000, 'x') %}", blob2: "{% $pad('', 100000, 'y') %}" } }],
    });
    expect((await settled(big.execution, ['FAILED'])).error?.code).toBe('STATE_TOO_LARGE');
  });

  it('waits in a delay without holding a worker, then continues', async () => {
    const { execution } = await givenRun({
      steps: [
        { id: 'wait', type: 'delay', seconds: 2 },
        { id: 'after', type: 'set', values: { woke: true } },
      ],
    });
    const sleeping = await eventually(
      () => read(execution),
      (e) => e.wakeAt !== undefined && e.lease === undefined && e.dispatch !== undefined,
    );
    expect(sleeping.status).toBe('RUNNING');
    const done = await settled(execution, ['SUCCEEDED']);
    expect(done.variables).toMatchObject({ woke: true });
    expect(done.finishedAt as number).toBeGreaterThanOrEqual((sleeping.wakeAt as number) - 1000);
  });

  it('stops at a manual_approval step with a PENDING approval, and resumes on the decision', async () => {
    const { execution, admin } = await givenRun(
      {
        variables: { amount: { type: 'number', default: 7 } },
        steps: [
          {
            id: 'approve',
            type: 'manual_approval',
            title: "{% 'Pay ' & $string($vars.amount) %}",
            reviewers: ['role:admin', `user:${'usr_01jzzzzzzzzzzzzzzzzzzzzzzz'}`],
            timeoutSeconds: 3600,
            form: [
              { name: 'ticket', type: 'string', required: true },
              { name: 'amount', type: 'number', default: '{% $vars.amount %}' },
            ],
          },
          { id: 'after', type: 'set', values: { note: "{% 'ticket ' & $vars.ticket & ' by ' & $steps.approve.decidedBy %}" } },
        ],
      },
      {},
    );
    const waiting = await settled(execution, ['WAITING_APPROVAL']);
    expect(waiting.approvalId).toMatch(/^ap_/);
    expect(waiting.steps[0]?.status).toBe('WAITING');
    const approval = await getApproval(waiting.accountId, waiting.approvalId as string);
    expect(approval).toMatchObject({
      status: 'PENDING',
      title: 'Pay 7',
      stepId: 'approve',
      executionId: execution.executionId,
      reviewers: ['role:admin', 'user:usr_01jzzzzzzzzzzzzzzzzzzzzzzz'],
    });
    expect(approval?.form?.[1]).toMatchObject({ name: 'amount', default: 7 });
    expect(approval?.expiresAt).toBeGreaterThan(Date.now());
    expect(await eventTypes(waiting)).toContain('approval.requested');

    expect(
      await resumeAfterDecision(waiting.accountId, waiting.executionId, approval?.approvalId as string, {
        decision: 'approve',
        decidedBy: admin.userId,
        formData: { ticket: 'OPS-1' },
      }),
    ).toBe('RUNNING');
    const done = await settled(execution, ['SUCCEEDED']);
    expect(done.variables).toMatchObject({ ticket: 'OPS-1', note: `ticket OPS-1 by ${admin.userId}` });
    // A second decision for the same approval moves nothing.
    expect(
      await resumeAfterDecision(waiting.accountId, waiting.executionId, approval?.approvalId as string, {
        decision: 'reject',
        decidedBy: admin.userId,
      }),
    ).toBeUndefined();
    expect((await read(execution)).status).toBe('SUCCEEDED');
  });

  it('ends the run FAILED APPROVAL_REJECTED on rejection, or continues with onReject: continue', async () => {
    const def = (onReject: string) => ({
      steps: [
        { id: 'approve', type: 'manual_approval', title: 'ok?', reviewers: ['role:admin'], onReject },
        { id: 'after', type: 'set', values: { decision: '{% $steps.approve.decision %}' } },
      ],
    });
    const strict = await givenRun(def('fail'));
    const w1 = await settled(strict.execution, ['WAITING_APPROVAL']);
    expect(
      await resumeAfterDecision(w1.accountId, w1.executionId, w1.approvalId as string, {
        decision: 'reject',
        decidedBy: strict.admin.userId,
        comment: 'no',
      }),
    ).toBe('RUNNING');
    // The worker applies the decision: the rejection fails the run.
    const rejected = await settled(w1, ['FAILED']);
    expect(rejected).toMatchObject({ status: 'FAILED', error: { code: 'APPROVAL_REJECTED' } });
    expect(rejected.steps.map((s) => s.status)).toEqual(['FAILED', 'PENDING']);

    const lenient = await givenRun(def('continue'));
    const w2 = await settled(lenient.execution, ['WAITING_APPROVAL']);
    await resumeAfterDecision(w2.accountId, w2.executionId, w2.approvalId as string, {
      decision: 'reject',
      decidedBy: lenient.admin.userId,
    });
    expect((await settled(w2, ['SUCCEEDED'])).variables).toMatchObject({ decision: 'reject' });
  });

  it('ends every step with its event, the run last, each event numbered (seq) in the order written: approve, reject, delay', async () => {
    const log = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100)).items;
    /** The log's contract: seq unique and increasing in the log's order, the run's end event last in `at`. */
    const expectOrdered = (events: Awaited<ReturnType<typeof log>>) => {
      const seqs = events.map((ev) => ev.seq as number);
      expect(seqs.every((n) => Number.isInteger(n))).toBe(true);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(seqs.length);
      const end = events.at(-1) as (typeof events)[number];
      for (const ev of events) expect(ev.at).toBeLessThanOrEqual(end.at);
    };
    const approvalFlow = (onReject: string) => ({
      steps: [
        { id: 'approve', type: 'manual_approval', title: 'ok?', reviewers: ['role:admin'], onReject },
        { id: 'after', type: 'set', values: { x: 1 } },
      ],
    });
    for (const [decision, onReject, status, stepEnd] of [
      ['approve', 'fail', 'SUCCEEDED', 'step.succeeded'],
      ['reject', 'fail', 'FAILED', 'step.failed'],
      ['reject', 'continue', 'SUCCEEDED', 'step.succeeded'],
    ] as const) {
      const run = await givenRun(approvalFlow(onReject));
      const w = await settled(run.execution, ['WAITING_APPROVAL']);
      await resumeAfterDecision(w.accountId, w.executionId, w.approvalId as string, { decision, decidedBy: run.admin.userId });
      const done = await settled(w, ['SUCCEEDED', 'FAILED']);
      expect(done.status).toBe(status);
      const events = await log(done);
      expectOrdered(events);
      const types = events.map((ev) => ev.type);
      expect(types.slice(0, 5), `${decision} ${onReject}`).toEqual([
        'execution.started',
        'step.started',
        'approval.requested',
        'approval.decided',
        stepEnd,
      ]);
      expect(events[4]?.data).toMatchObject({ stepId: 'approve', decision });
      expect(types.at(-1)).toBe(status === 'SUCCEEDED' ? 'execution.succeeded' : 'execution.failed');
      // Every step that ended has its ending event.
      for (const step of done.steps.filter((s) => s.status === 'SUCCEEDED' || s.status === 'FAILED'))
        expect(events.some((ev) => ev.type.startsWith('step.') && ev.type !== 'step.started' && ev.data.stepId === step.stepId)).toBe(true);
    }
    const delayed = await givenRun({
      steps: [
        { id: 'wait', type: 'delay', seconds: 1 },
        { id: 'after', type: 'set', values: { x: 1 } },
      ],
    });
    const done = await settled(delayed.execution, ['SUCCEEDED']);
    expect(done.steps.map((s) => s.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const events = await log(done);
    expectOrdered(events);
    expect(events.map((ev) => [ev.type, ev.data.stepId ?? null])).toEqual([
      ['execution.started', null],
      ['step.started', 'wait'],
      ['step.succeeded', 'wait'],
      ['step.started', 'after'],
      ['step.succeeded', 'after'],
      ['execution.succeeded', null],
    ]);
    expect(events.map((ev) => ev.seq)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('cancels a WAITING_APPROVAL run and its approval, a sleeping run at once, and a RUNNING one mid-request', async () => {
    const waiting = await givenRun({ steps: [{ id: 'approve', type: 'manual_approval', title: 'x', reviewers: ['role:admin'] }] });
    const w = await settled(waiting.execution, ['WAITING_APPROVAL']);
    expect((await cancelRun(w.accountId, w.executionId, 'not needed')).status).toBe('CANCELLED');
    expect((await getApproval(w.accountId, w.approvalId as string))?.status).toBe('CANCELLED');
    expect(await eventTypes(w)).toContain('execution.cancelled');

    const sleeping = await givenRun({
      steps: [
        { id: 'wait', type: 'delay', seconds: 60 },
        { id: 'after', type: 'set', values: { woke: true } },
      ],
    });
    await eventually(
      () => read(sleeping.execution),
      (e) => e.wakeAt !== undefined && e.lease === undefined,
    );
    expect((await cancelRun(sleeping.account.accountId, sleeping.execution.executionId, undefined)).status).toBe('CANCELLED');

    const slowPath = `/slow/${Math.random()}`;
    const busy = await givenRun({
      steps: [
        { id: 'call', type: 'http_request', url: `${base}${slowPath}`, timeoutMs: 30000 },
        { id: 'after', type: 'set', values: { reached: true } },
      ],
    });
    await eventually(
      async () => hits.get(slowPath) ?? 0,
      (n) => n === 1,
    );
    // Asked by an API key (no person): the run's end names the key.
    const requested = await cancelRun(busy.account.accountId, busy.execution.executionId, 'abort', undefined, Date.now(), {
      accountId: busy.account.accountId,
      keyId: 'key_held',
    });
    expect(requested).toMatchObject({ status: 'RUNNING', cancelRequested: true, cancelKey: 'key_held' });
    const cancelled = await settled(busy.execution, ['CANCELLED']);
    const ended = (await listEvents(busy.account.accountId, busy.execution.executionId, 100)).items.find(
      (e) => e.type === 'execution.cancelled',
    );
    expect(ended?.data).toEqual({ reason: 'abort', from: 'RUNNING', key: 'key_held' });
    expect(cancelled.variables).not.toHaveProperty('reached');
    expect(cancelled.steps.map((s) => s.status)).toEqual(['CANCELLED', 'CANCELLED']);

    await expect(cancelRun(busy.account.accountId, busy.execution.executionId, undefined)).rejects.toMatchObject({
      kind: 'conflict',
      code: 'EXECUTION_FINISHED',
    });
  });
});

describe('delivery semantics (no poller: messages are handed to the worker by the test)', () => {
  it('cancels a PENDING run at once; its message is then dropped', async () => {
    const { execution } = await givenRun({ steps: [{ id: 'a', type: 'set', values: { ran: true } }] });
    const [message] = await takeRunMessages();
    expect(message?.executionId).toBe(execution.executionId);
    expect((await cancelRun(execution.accountId, execution.executionId, undefined)).status).toBe('CANCELLED');
    await processRunMessage(message as never, { remainingMs: () => 30_000 });
    const after = await read(execution);
    expect(after.status).toBe('CANCELLED');
    expect(after.variables).not.toHaveProperty('ran');
  });

  it('executes each step once under duplicate and concurrent deliveries of one message', async () => {
    const path = `/once/${Math.random()}`;
    const { execution } = await givenRun({
      steps: [
        { id: 'call', type: 'http_request', method: 'POST', url: `${base}${path}`, body: { n: 1 } },
        { id: 'report', type: 'artifact', name: 'a.txt', content: 'hello' },
      ],
    });
    const [message] = await takeRunMessages();
    expect(message?.executionId).toBe(execution.executionId);
    await Promise.all(Array.from({ length: 4 }, () => processRunMessage(message as never, { remainingMs: () => 30_000 })));
    await processRunMessage(message as never, { remainingMs: () => 30_000 }); // a late redelivery
    const done = await read(execution);
    expect(done.status).toBe('SUCCEEDED');
    expect(hits.get(path)).toBe(1);
    expect(await listArtifacts(done.accountId, done.executionId)).toHaveLength(1);
    expect((await eventTypes(done)).filter((t) => t === 'step.succeeded')).toHaveLength(2);
  });

  it('a worker fault mid-step reports the message as failed and leaves the lease; a redelivery never reruns a finished step', async () => {
    const path = `/before-crash/${Math.random()}`;
    const { execution } = await givenRun({
      steps: [
        { id: 'call', type: 'http_request', url: `${base}${path}` },
        { id: 'report', type: 'artifact', name: 'a.txt', content: 'x' },
      ],
    });
    const [message] = await takeRunMessages();
    // S3 failing in a way the engine does not expect stands for a crash in the middle of the step.
    const fault = vi.spyOn(await storage(), 'send').mockRejectedValueOnce(new Error('simulated crash') as never);
    const record = { messageId: 'm-1', receiptHandle: 'r', body: JSON.stringify(message), attributes: { ApproximateReceiveCount: '1' } };
    const response = await runWorker({ Records: [record] } as never, { getRemainingTimeInMillis: () => 30_000 } as never);
    fault.mockRestore();
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    const crashed = await read(execution);
    expect(crashed).toMatchObject({ status: 'RUNNING', nextStep: 1 });
    expect(crashed.lease?.expiresAt).toBeGreaterThan(Date.now());
    expect(crashed.steps.map((s) => s.status)).toEqual(['SUCCEEDED', 'PENDING']);

    // The redelivered message finds no dispatch to claim: nothing runs again (the sweep handles the lease).
    await runWorker(
      { Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] } as never,
      { getRemainingTimeInMillis: () => 30_000 } as never,
    );
    expect(hits.get(path)).toBe(1);
    expect(await read(execution)).toMatchObject({ status: 'RUNNING', nextStep: 1, lease: crashed.lease });
  });

  it('hands a long run over to a new message when the invocation runs out of time', async () => {
    const { execution } = await givenRun({
      steps: Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, type: 'set', values: { [`v${i}`]: i } })),
    });
    const [message] = await takeRunMessages();
    let budget = 4;
    // The claim reads the time left once (its lease ends with the invocation), then each step does:
    // pretend the steps take all but a sliver of the time, so the worker hands off after three.
    await processRunMessage(message as never, { remainingMs: () => (budget-- > 0 ? 30_000 : 1_000) });
    const mid = await read(execution);
    expect(mid.status).toBe('RUNNING');
    expect(mid.lease).toBeUndefined();
    expect(mid.nextStep).toBe(3);
    const [next] = await takeRunMessages();
    expect(next?.dispatch).toBe(mid.dispatch);
    await processRunMessage(next as never, { remainingMs: () => 30_000 });
    expect((await read(execution)).status).toBe('SUCCEEDED');
  });
});

describe('starting runs', () => {
  it('applies template defaults, checks declared types and refuses variables over 256 KiB, writing nothing', async () => {
    const { account, admin } = await givenAccount();
    const workflow = await createWorkflow(
      { accountId: account.accountId, userId: admin.userId, role: 'admin' },
      {
        name: 't',
        definition: WorkflowDefinition.parse({
          variables: { n: { type: 'number', default: 1 } },
          steps: [{ id: 'a', type: 'set', values: {} }],
        }),
        recovery: false,
        editors: [],
      },
    );
    const { execution } = await startRun({ workflow, trigger: 'api', variables: { extra: 'kept' } });
    expect(execution).toMatchObject({ status: 'PENDING', variables: { n: 1, extra: 'kept' } });
    const [started] = (await listEvents(execution.accountId, execution.executionId, 1)).items;
    expect(started).toMatchObject({ type: 'execution.started', data: { trigger: 'api', input: { extra: 'kept' } } });
    await expect(startRun({ workflow, trigger: 'api', variables: { n: 'one' } })).rejects.toMatchObject({
      kind: 'invalid',
      code: 'VALIDATION_FAILED',
    });
    await expect(startRun({ workflow, trigger: 'api', variables: { big: 'x'.repeat(300 * 1024) } })).rejects.toMatchObject({
      kind: 'invalid',
    });
  });

  it('returns the first execution for a repeated Idempotency-Key and refuses it with another request', async () => {
    const { account, admin } = await givenAccount();
    const workflow = await createWorkflow(
      { accountId: account.accountId, userId: admin.userId, role: 'admin' },
      { name: 't', definition: WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: {} }] }), recovery: false, editors: [] },
    );
    const idem = (request: unknown) => ({ scope: `WF#${workflow.workflowId}`, key: 'order-42', request });
    const results = await Promise.all(
      Array.from({ length: 3 }, () =>
        startRun({ workflow, trigger: 'api', variables: { a: 1 }, idempotency: idem({ variables: { a: 1 } }) }),
      ),
    );
    const ids = new Set(results.map((r) => r.execution.executionId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    await expect(
      startRun({ workflow, trigger: 'api', variables: { a: 2 }, idempotency: idem({ variables: { a: 2 } }) }),
    ).rejects.toMatchObject({
      kind: 'conflict',
      code: 'IDEMPOTENCY_KEY_REUSED',
    });
  });
});
