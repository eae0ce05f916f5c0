import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as testHandler } from '../../functions/http/workflows/test.ts';
import { db, queue, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { TEST_SHARE } from '../../shared/engine/test-run.ts';
import { useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { check, good, request, runsWith, text, ulidish } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * `POST /api/workflows/test` (docs/workflows-as-code.md "Test runs"): a workflow executed on the engine
 * with its effects mocked, in-process on the emulators under the route's own grants (table:read). It
 * writes no item, queues nothing, and sends no request: a listener on 127.0.0.1, which the step
 * allowlist lets runs reach, counts what would have.
 */

let listener: Server;
let base: string;
const heard: string[] = [];
let a: Awaited<ReturnType<typeof givenAccount>>;
let b: Awaited<ReturnType<typeof givenAccount>>;
let sessionA: string;
let sessionB: string;

beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  listener = createServer((req, res) => {
    heard.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"real":true}');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  [a, b] = await Promise.all([givenAccount(), givenAccount()]);
  [sessionA, sessionB] = await Promise.all([sessionOf(a.admin.email), sessionOf(b.admin.email)]);
});
afterAll(() => new Promise<void>((r) => (listener ? listener.close(() => r()) : r())));

const post = (session: string, body: unknown) =>
  invoke(testHandler, apiEvent({ method: 'POST', path: '/api/workflows/test', headers: bearer(session), body: body as object }));

/** Every item of an account: its partitions, and any item that names it (approvals, callbacks, artifacts). */
async function accountItems(accountId: string) {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'contains(PK, :acc) OR accountId = :acc',
        ExpressionAttributeValues: { ':acc': accountId },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items.map((i) => `${i.PK} ${i.SK}`).sort();
}

/** Messages on this file's runs and notifications queues. */
async function queued() {
  const urls = [config().RUNS_QUEUE_URL, config().NOTIFY_QUEUE_URL];
  const got = await Promise.all(
    urls.map((QueueUrl) => queue().send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }))),
  );
  return got.flatMap((r) => r.Messages ?? []);
}

/** One step of each kind with an effect, a delay, an artifact; notifications to the listener. */
const order = () => ({
  variables: { amount: { type: 'number', default: 1 } },
  steps: [
    { id: 'prep', type: 'set', values: { total: '{% $vars.amount * 2 %}' } },
    {
      id: 'charge',
      type: 'http_request',
      method: 'POST',
      url: `${base}/charge`,
      body: { total: '{% $vars.total %}' },
      retry: { maxAttempts: 3, intervalSeconds: 30, jitter: 'none', on: ['HTTP_5XX'] },
    },
    { id: 'cool', type: 'delay', seconds: 3600 },
    { id: 'receipt', type: 'artifact', name: 'receipt.json', content: { charge: '{% $steps.charge.body.id %}' } },
    {
      id: 'approve',
      type: 'manual_approval',
      title: '{% "Ship " & $string($vars.total) %}',
      reviewers: ['role:admin'],
      form: [{ name: 'note', type: 'string', required: true }],
    },
    { id: 'ship', type: 'wait_for_callback', timeoutSeconds: 600, request: { method: 'POST', url: `${base}/ship`, timeoutMs: 1000 } },
  ],
  output: { charge: '{% $steps.charge.body.id %}', tracking: '{% $steps.ship.output.tracking %}', note: '{% $vars.note %}' },
  notifications: [
    {
      url: `${base}/notify`,
      events: ['execution.succeeded', 'step.succeeded', 'approval.requested'],
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    },
  ],
});
const orderMocks = {
  charge: [
    { status: 503, body: 'busy' },
    { status: 200, headers: { 'content-type': 'application/json' }, body: { id: 'ch_1' } },
  ],
  approve: { decision: 'approve', form: { note: 'looks fine' } },
  ship: { status: 'success', output: { tracking: 'T-1' } },
};

describe('POST /api/workflows/test', () => {
  it('runs a stored workflow to its end on mocks: the trace, nothing written, queued or sent, no wait slept', async () => {
    const w = await createWorkflow(adminSession(a), {
      name: 'Order',
      definition: WorkflowDefinition.parse(order()),
      recovery: false,
      editors: [],
    });
    const before = await accountItems(a.account.accountId);
    const began = Date.now();
    const res = await post(sessionA, { workflowId: w.workflowId, input: { amount: 21 }, mocks: orderMocks });
    expect(res.status, res.body).toBe(200);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(res.json).toMatchObject({
      status: 'SUCCEEDED',
      output: { charge: 'ch_1', tracking: 'T-1', note: 'looks fine' },
      error: null,
      path: ['prep', 'charge', 'cool', 'receipt', 'approve', 'ship'],
      // The retry's 30 s backoff and the hour's delay, planned: none slept.
      waitedSeconds: 3630,
    });
    const step = (id: string) => res.json.steps.find((s: { id: string }) => s.id === id);
    expect(step('prep')).toMatchObject({ status: 'SUCCEEDED', input: null, output: { total: 42 } });
    expect(step('charge')).toMatchObject({
      status: 'SUCCEEDED',
      attempts: 2,
      input: { method: 'POST', url: `${base}/charge`, body: '{"total":42}' },
      output: { status: 200, body: { id: 'ch_1' }, attempts: 2 },
    });
    expect(step('receipt')).toMatchObject({
      status: 'SUCCEEDED',
      output: { name: 'receipt.json', size: JSON.stringify({ charge: 'ch_1' }).length },
    });
    expect(step('approve')).toMatchObject({
      status: 'SUCCEEDED',
      input: { title: 'Ship 42', reviewers: ['role:admin'] },
      output: { decision: 'approve', decidedBy: 'test', formData: { note: 'looks fine' } },
    });
    expect(step('ship')).toMatchObject({ status: 'SUCCEEDED', output: { status: 'success', output: { tracking: 'T-1' } } });
    expect(heard).toEqual([]);
    expect(await queued()).toEqual([]);
    expect(await accountItems(a.account.accountId)).toEqual(before);
  });

  it('tests a draft definition the same way, and mocks rejections, failures and timeouts as the engine applies them', async () => {
    const answer = async (mocks: object, definition: object = order()) => (await post(sessionA, { definition, input: {}, mocks })).json;
    const rejected = await answer({ ...orderMocks, approve: { decision: 'reject', comment: 'no' } });
    expect(rejected).toMatchObject({
      status: 'FAILED',
      output: null,
      error: { code: 'APPROVAL_REJECTED', message: 'Step approve was rejected: no' },
    });
    expect(rejected.path.at(-1)).toBe('approve');
    const exhausted = await answer({ ...orderMocks, charge: { status: 502 } });
    expect(exhausted).toMatchObject({ status: 'FAILED', error: { code: 'HTTP_STATUS' }, waitedSeconds: 90 });
    expect(exhausted.steps[1]).toMatchObject({ id: 'charge', status: 'FAILED', attempts: 3 });
    const reported = await answer({ ...orderMocks, ship: { status: 'failure', error: { code: 'NO_STOCK', message: 'none left' } } });
    expect(reported).toMatchObject({ status: 'FAILED', error: { code: 'NO_STOCK', message: 'none left' } });
    const timedOut = order();
    Object.assign(timedOut.steps[5] as object, { onTimeout: 'continue' });
    expect(await answer({ ...orderMocks, ship: { status: 'timeout' } }, timedOut)).toMatchObject({
      status: 'SUCCEEDED',
      output: { charge: 'ch_1', note: 'looks fine' },
    });
    // A list answers a loop's iterations in turn; the trace has each iteration's execution.
    const loop = {
      steps: [{ id: 'each', type: 'for_each', items: '{% [1, 2] %}', steps: [{ id: 'ping', type: 'http_request', url: `${base}/ping` }] }],
      output: '{% $steps.each.results.body %}',
    };
    expect(
      await answer(
        {
          ping: [
            { status: 200, body: 'a' },
            { status: 200, body: 'b' },
          ],
        },
        loop,
      ),
    ).toMatchObject({
      status: 'SUCCEEDED',
      output: ['a', 'b'],
      path: ['each', 'ping', 'ping'],
      steps: [
        { id: 'each', status: 'SUCCEEDED', output: { items: 2 } },
        { id: 'ping', iteration: 0, status: 'SUCCEEDED', output: { body: 'a' } },
        { id: 'ping', iteration: 1, status: 'SUCCEEDED', output: { body: 'b' } },
      ],
    });
    expect(heard).toEqual([]);
  });

  it.each([
    ['charge', 'http_request', {}],
    ['approve', 'manual_approval', { charge: orderMocks.charge }],
    ['ship', 'wait_for_callback', { charge: orderMocks.charge, approve: orderMocks.approve }],
  ])('fails the test run at an unmocked %s (%s), naming the step, with no request sent', async (id, type, mocks) => {
    const res = await post(sessionA, { definition: order(), mocks });
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({ status: 'FAILED', error: { code: 'MOCK_MISSING' } });
    expect(res.json.error.message).toMatch(`Step ${id} (${type}) has no mock`);
    expect(res.json.path.at(-1)).toBe(id);
    expect(res.json.steps.at(-1)).toMatchObject({ id, status: 'FAILED', error: { code: 'MOCK_MISSING' } });
    if (type === 'http_request') expect(res.json.steps.at(-1).input).toMatchObject({ method: 'POST', url: `${base}/charge` });
    expect(heard).toEqual([]);
  });

  it('fails when a list of answers runs out, and a run that would go on too long is bounded', async () => {
    const res = await post(sessionA, { definition: order(), mocks: { ...orderMocks, charge: [{ status: 500 }] } });
    expect(res.json).toMatchObject({
      status: 'FAILED',
      error: { code: 'MOCK_MISSING', message: expect.stringMatching(/charge .* needs answer 2; its mock lists 1/) },
    });
    const loop = {
      steps: [{ id: 'again', type: 'switch', cases: [{ when: true, next: 'again' }], default: '$end' }],
      maxStepExecutions: 50,
    };
    expect((await post(sessionA, { definition: loop })).json).toMatchObject({ status: 'FAILED', error: { code: 'STEP_LIMIT_EXCEEDED' } });
    const share = { ...TEST_SHARE };
    TEST_SHARE.ms = 0;
    try {
      expect((await post(sessionA, { definition: loop })).json).toMatchObject({ status: 'FAILED', error: { code: 'TEST_RUN_TOO_LONG' } });
    } finally {
      Object.assign(TEST_SHARE, share);
    }
  });

  it('refuses bad bodies with precise 400s, and another account’s workflow as unknown', async () => {
    const errors = async (body: unknown) => {
      const res = await post(sessionA, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      return res.json.errors as { path: string; message: string }[];
    };
    expect(await errors({ mocks: {} })).toEqual([{ path: 'definition', message: 'give exactly one of definition and workflowId' }]);
    expect(await errors({ definition: { steps: [{ id: 'a', type: 'set', values: {}, next: 'gone' }] } })).toEqual([
      expect.objectContaining({ path: 'definition.steps.0.next' }),
    ]);
    expect(await errors({ definition: order(), mocks: { nope: { status: 200 }, prep: { status: 200 } } })).toEqual([
      { path: 'mocks.nope', message: 'no step of the workflow has this id' },
      { path: 'mocks.prep', message: 'a set step takes no mock (it has no effect outside the run)' },
    ]);
    expect(await errors({ definition: order(), mocks: { charge: { status: 99 }, approve: { decision: 'maybe' } } })).toEqual([
      expect.objectContaining({ path: 'mocks.charge.status' }),
      expect.objectContaining({ path: 'mocks.approve.decision' }),
    ]);
    expect(await errors({ definition: order(), input: { amount: 'ten' } })).toEqual([
      { path: 'input.amount', message: 'must be a number' },
    ]);
    expect(await errors({ definition: order(), mocks: { ...orderMocks, approve: { decision: 'approve', form: { note: 3 } } } })).toEqual([
      { path: 'mocks.approve.form.note', message: 'must be a string' },
    ]);
    const w = await createWorkflow(adminSession(b), {
      name: 'B',
      definition: WorkflowDefinition.parse(order()),
      recovery: false,
      editors: [],
    });
    expectProblem(await post(sessionA, { workflowId: w.workflowId }), 404, 'WORKFLOW_NOT_FOUND');
    expect((await post(sessionB, { workflowId: w.workflowId, mocks: orderMocks })).json.status).toBe('SUCCEEDED');
    expectProblem(
      await invoke(testHandler, apiEvent({ method: 'POST', path: '/api/workflows/test', headers: bearer(a.adminKey.token), body: {} })),
      401,
      'INVALID_SESSION',
    );
  });

  it('answers any body with a 200 or a 4xx problem, never a 5xx (property)', async () => {
    const steps = ['prep', 'charge', 'cool', 'receipt', 'approve', 'ship'];
    const mock = fc.oneof(
      fc.record(
        { status: fc.integer({ min: 0, max: 700 }), headers: fc.dictionary(fc.string(), fc.string()), body: fc.jsonValue() },
        { requiredKeys: ['status'] },
      ),
      fc.record(
        {
          decision: fc.constantFrom('approve', 'reject', 'x'),
          form: fc.dictionary(fc.constantFrom('note', 'x'), fc.jsonValue()),
          comment: fc.string(),
        },
        { requiredKeys: ['decision'] },
      ),
      fc.record(
        {
          status: fc.constantFrom('success', 'failure', 'timeout', 'x'),
          output: fc.jsonValue(),
          error: fc.record({ code: fc.constantFrom('E', 'BAD_ONE', 'x'), message: fc.string() }),
        },
        { requiredKeys: ['status'] },
      ),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const body = fc.record(
      {
        definition: fc.oneof(
          fc.constant(order()),
          fc.constant({ steps: [{ id: 'x', type: 'set', values: { y: '{% $vars.q %}' } }] }),
          fc.jsonValue({ maxDepth: 3 }),
        ),
        workflowId: fc.oneof(
          ulidish.map((u) => `wf_${u}`),
          text,
        ),
        input: fc.oneof(fc.dictionary(fc.constantFrom('amount', 'x', '__proto__'), fc.jsonValue()), fc.jsonValue({ maxDepth: 2 })),
        mocks: fc.oneof(
          fc.dictionary(fc.oneof(fc.constantFrom(...steps), text), fc.oneof(mock, fc.array(mock, { maxLength: 4 }))),
          fc.jsonValue({ maxDepth: 2 }),
        ),
      },
      { requiredKeys: [] },
    );
    const req = request(
      fc.constant(`Bearer ${sessionA}`),
      body.map((v) => ({ body: JSON.stringify(v), isBase64Encoded: false })),
    );
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(req, async (r) => {
        const res = await check(testHandler, 'POST', '/api/workflows/test', r, [200, 400, 404, 413, 415]);
        if (res.status === 200) ok++;
      }),
      runsWith({ numRuns: 80 }, good(`Bearer ${sessionA}`, { json: { definition: order(), mocks: orderMocks } })),
    );
    expect(ok).toBeGreaterThan(0);
    expect(heard).toEqual([]);
  });
});
