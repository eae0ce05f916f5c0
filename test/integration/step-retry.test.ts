import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storage } from '../../shared/clients.ts';
import { listArtifacts } from '../../shared/db/entities/artifact.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { INLINE_RETRY_MS } from '../../shared/engine/step-retry.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { eventually, startWorkers, takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';

// Step retries against a local listener: `/flaky/<n>/<tag>` answers 503 to its first n requests and
// 200 after; `/limited/<seconds>/<tag>` answers 429 with `Retry-After` once; `/status/<code>/<tag>` always that code.
let target: Server;
let base: string;
const hits = new Map<string, number[]>();
beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  target = createServer((req, res) => {
    const path = req.url ?? '/';
    const times = [...(hits.get(path) ?? []), Date.now()];
    hits.set(path, times);
    const [, kind, arg] = path.split('/');
    const n = Number(arg);
    if (kind === 'flaky' && times.length <= n) return void res.writeHead(503).end('busy');
    if (kind === 'limited' && times.length === 1) return void res.writeHead(429, { 'retry-after': String(n) }).end('slow down');
    if (kind === 'status') return void res.writeHead(n).end('no');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, attempt: times.length }));
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
});
afterAll(() => {
  target.closeAllConnections();
  target.close();
});

let tags = 0;
const pathOf = (p: string) => `${p}/${++tags}`;

/** An API run of `steps` in a new account. */
async function givenFlow(steps: unknown[]) {
  const { account, admin } = await givenAccount();
  const workflow = await createWorkflow(
    { accountId: account.accountId, userId: admin.userId, role: 'admin' },
    { name: 'retry', definition: WorkflowDefinition.parse({ steps }), recovery: false, editors: [] },
  );
  return (await startRun({ workflow, trigger: 'api', variables: {} })).execution;
}
const givenRun = (step: Record<string, unknown>) => givenFlow([{ id: 'call', type: 'http_request', timeoutMs: 1000, ...step }]);
const read = (e: Execution) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const events = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100)).items;
const settled = (e: Execution) =>
  eventually(
    () => read(e),
    (x) => ['SUCCEEDED', 'FAILED'].includes(x.status),
  );

describe('retry on the real queue and workers', () => {
  let stop: () => Promise<unknown>;
  beforeAll(() => {
    stop = startWorkers();
  });
  afterAll(() => stop());

  it('an http_request to /flaky/2 succeeds on attempt 3 after backoffs of 1 s and 2 s, each written as step.retrying', async () => {
    const path = pathOf('/flaky/2');
    const e = await givenRun({ url: base + path, retry: { maxAttempts: 5, intervalSeconds: 1, backoffRate: 2, jitter: 'none' } });
    const done = await settled(e);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.outputs.call).toMatchObject({ status: 200, body: { ok: true, attempt: 3 }, attempts: 3 });
    expect(done.steps[0]).toMatchObject({ status: 'SUCCEEDED', attempts: 3, tries: 3 });
    const log = await events(e);
    expect(log.filter((x) => x.type === 'step.retrying').map((x) => x.data)).toEqual([
      { stepId: 'call', attempt: 1, delaySeconds: 1, error: { code: 'HTTP_5XX', stepError: 'HTTP_STATUS', message: expect.any(String) } },
      { stepId: 'call', attempt: 2, delaySeconds: 2, error: { code: 'HTTP_5XX', stepError: 'HTTP_STATUS', message: expect.any(String) } },
    ]);
    expect(log.filter((x) => x.type === 'step.started').map((x) => x.data.attempt)).toEqual([undefined, 2, 3]);
    // The listener saw three attempts, each at least its backoff after the one before.
    const [t1, t2, t3] = hits.get(path) as number[];
    expect(hits.get(path)).toHaveLength(3);
    expect((t2 as number) - (t1 as number)).toBeGreaterThanOrEqual(1000 - 20);
    expect((t3 as number) - (t2 as number)).toBeGreaterThanOrEqual(2000 - 20);
  });

  it('retries exhausted: the step fails with its own error after maxAttempts, and a 4xx is not retried by default', async () => {
    const path = pathOf('/status/500');
    const e = await givenRun({ url: base + path, retry: { maxAttempts: 2, intervalSeconds: 1, jitter: 'none' } });
    const done = await settled(e);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'HTTP_STATUS' } });
    expect(done.steps[0]).toMatchObject({ status: 'FAILED', tries: 2, error: { code: 'HTTP_STATUS' } });
    expect(hits.get(path)).toHaveLength(2);
    expect((await events(e)).filter((x) => x.type === 'step.retrying')).toHaveLength(1);

    const notFound = pathOf('/status/404');
    const e2 = await givenRun({ url: base + notFound, retry: { maxAttempts: 3 } });
    expect(await settled(e2)).toMatchObject({ status: 'FAILED', error: { code: 'HTTP_STATUS' } });
    expect(hits.get(notFound)).toHaveLength(1);
    // ... unless `on` lists HTTP_4XX; allowFailure then applies to the last attempt, whose output has `attempts`.
    const listed = pathOf('/status/404');
    const e3 = await givenRun({ url: base + listed, allowFailure: true, retry: { maxAttempts: 2, jitter: 'none', on: ['HTTP_4XX'] } });
    const continued = await settled(e3);
    expect(continued.status).toBe('SUCCEEDED');
    expect(continued.outputs.call).toMatchObject({ status: 404, attempts: 2 });
    expect(hits.get(listed)).toHaveLength(2);
  });
});

describe('retry with control flow', () => {
  let stop: () => Promise<unknown>;
  beforeAll(() => {
    stop = startWorkers();
  });
  afterAll(() => stop());

  it('retries exhausted with onError "continue": the run goes on with $steps.<id>.error and the last attempt', async () => {
    const path = pathOf('/status/503');
    const e = await givenFlow([
      {
        id: 'call',
        type: 'http_request',
        timeoutMs: 1000,
        url: base + path,
        retry: { maxAttempts: 2, intervalSeconds: 1, jitter: 'none' },
        onError: 'continue',
      },
      {
        id: 'after',
        type: 'set',
        values: { code: '{% $steps.call.error.code %}', status: '{% $steps.call.error.status %}', attempts: '{% $steps.call.attempts %}' },
      },
    ]);
    const done = await settled(e);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.variables).toEqual({ code: 'HTTP_STATUS', status: 503, attempts: 2 });
    expect(done.steps[0]).toMatchObject({ status: 'FAILED', tries: 2, error: { code: 'HTTP_STATUS', status: 503 } });
    expect(done.steps[1]).toMatchObject({ status: 'SUCCEEDED' });
    expect(hits.get(path)).toHaveLength(2);
    const log = await events(e);
    expect(log.filter((x) => x.type === 'step.retrying')).toHaveLength(1);
    expect(log.filter((x) => x.type === 'step.failed').map((x) => x.data.stepId)).toEqual(['call']);
  });

  it('inside a for_each a step retries in its iteration (backoffs on the queue): every item answered, results in order', async () => {
    // Items 0 and 2 reach a /flaky/1 listener of their own (503, then 200), item 1 a /flaky/0 one.
    const tag = ++tags;
    const e = await givenFlow([
      {
        id: 'each',
        type: 'for_each',
        items: "{% ['a', 'b', 'c'] %}",
        steps: [
          {
            id: 'call',
            type: 'http_request',
            timeoutMs: 1000,
            url: `{% '${base}/flaky/' & $string(($index + 1) % 2) & '/${tag}-' & $item %}`,
            // Longer than INLINE_RETRY_MS: each backoff releases the run to an SQS delay, its place in the loop kept.
            retry: { maxAttempts: 3, intervalSeconds: Math.ceil(INLINE_RETRY_MS / 1000) + 1, jitter: 'none' },
          },
          {
            id: 'keep',
            type: 'set',
            values: { got: "{% { 'item': $item, 'attempts': $steps.call.attempts, 'seen': $steps.call.body.attempt } %}" },
          },
        ],
      },
    ]);
    const done = await settled(e);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.outputs.each).toEqual({
      items: 3,
      results: [
        { got: { item: 'a', attempts: 2, seen: 2 } },
        { got: { item: 'b', attempts: 1, seen: 1 } },
        { got: { item: 'c', attempts: 2, seen: 2 } },
      ],
    });
    expect(hits.get(`/flaky/1/${tag}-a`)).toHaveLength(2);
    expect(hits.get(`/flaky/0/${tag}-b`)).toHaveLength(1);
    expect(hits.get(`/flaky/1/${tag}-c`)).toHaveLength(2);
    // In order: every request of an item before any of the next one.
    const a = hits.get(`/flaky/1/${tag}-a`) as number[];
    const b = hits.get(`/flaky/0/${tag}-b`) as number[];
    const c = hits.get(`/flaky/1/${tag}-c`) as number[];
    expect(Math.max(...a)).toBeLessThanOrEqual(Math.min(...b));
    expect(Math.max(...b)).toBeLessThanOrEqual(Math.min(...c));
    const log = await events(e);
    expect(log.filter((x) => x.type === 'step.retrying').map((x) => [x.data.stepId, x.data.iteration, x.data.attempt])).toEqual([
      ['call', 0, 1],
      ['call', 2, 1],
    ]);
  });
});

describe('retry on an artifact', () => {
  let stop: () => Promise<unknown>;
  beforeAll(() => {
    stop = startWorkers();
  });
  afterAll(() => stop());

  it('an upload the store refuses with 503 (a stubbed fault: the emulator cannot be made to) is retried, and stored once', async () => {
    const client = await storage();
    let refused = 0;
    const name = 'refuseFirstUpload';
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand' && refused === 0) {
          refused++;
          throw Object.assign(new Error('We encountered an internal error. Please try again.'), {
            name: 'InternalError',
            $metadata: { httpStatusCode: 503 },
          });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      const { account, admin } = await givenAccount();
      const workflow = await createWorkflow(
        { accountId: account.accountId, userId: admin.userId, role: 'admin' },
        {
          name: 'artifact',
          definition: WorkflowDefinition.parse({
            steps: [{ id: 'report', type: 'artifact', name: 'r.txt', content: 'hello', retry: { maxAttempts: 2, jitter: 'none' } }],
          }),
          recovery: false,
          editors: [],
        },
      );
      const e = (await startRun({ workflow, trigger: 'api', variables: {} })).execution;
      const done = await settled(e);
      expect(done.status).toBe('SUCCEEDED');
      expect(done.outputs.report).toMatchObject({ name: 'r.txt', attempts: 2 });
      expect(refused).toBe(1);
      expect(await listArtifacts(e.accountId, e.executionId)).toHaveLength(1);
      const retrying = (await events(e)).filter((x) => x.type === 'step.retrying');
      expect(retrying.map((x) => x.data.error)).toEqual([
        { code: 'HTTP_5XX', stepError: 'STORAGE_UNAVAILABLE', message: expect.any(String) },
      ]);
    } finally {
      client.middlewareStack.remove(name);
    }
  });
});

describe('waits handed to the queue (the worker driven by hand)', () => {
  const next = async () =>
    (
      await eventually(
        () => takeRunMessages(1),
        (m) => m.length === 1,
        15_000,
      )
    )[0] as never;

  it("a 429's Retry-After (3 s) is waited on the queue: no worker held, the run RUNNING without a lease, woken by a delayed message", async () => {
    const path = pathOf('/limited/3');
    const e = await givenRun({ url: base + path, retry: { maxAttempts: 3, intervalSeconds: 1, jitter: 'full' } });
    await processRunMessage(await next(), { remainingMs: () => 50_000 });
    const waiting = await read(e);
    expect(waiting.status).toBe('RUNNING');
    expect(waiting.lease).toBeUndefined();
    expect(waiting.dispatch).toBeDefined();
    expect(waiting.steps[0]).toMatchObject({ status: 'RUNNING', tries: 2, error: { code: 'HTTP_STATUS' } });
    const retrying = (await events(e)).find((x) => x.type === 'step.retrying');
    expect(retrying?.data).toMatchObject({ attempt: 1, error: { code: 'HTTP_429' }, delaySeconds: 3 });
    expect(waiting.wakeAt).toBe((retrying?.at as number) + 3000);
    expect(3000).toBeGreaterThan(INLINE_RETRY_MS);

    const woken = await next();
    // The delayed message came no earlier than the wait (SQS delays are whole seconds).
    expect(Date.now()).toBeGreaterThanOrEqual(waiting.wakeAt as number);
    await processRunMessage(woken, { remainingMs: () => 50_000 });
    const done = await read(e);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.outputs.call).toMatchObject({ status: 200, attempts: 2 });
    expect(hits.get(path)).toHaveLength(2);
  });

  it('a backoff longer than what the invocation has left is handed to the queue, even when short', async () => {
    const path = pathOf('/flaky/1');
    const e = await givenRun({ url: base + path, retry: { maxAttempts: 2, intervalSeconds: 1, jitter: 'none' } });
    // 8.5 s left: the attempt's budget (1 s timeout + 2 s) fits beside the 5 s hand-off margin, the 1 s backoff and the next attempt do not.
    await processRunMessage(await next(), { remainingMs: () => 8_500 });
    const waiting = await read(e);
    expect(waiting).toMatchObject({ status: 'RUNNING', steps: [{ status: 'RUNNING', tries: 2 }] });
    expect(waiting.lease).toBeUndefined();
    expect(hits.get(path)).toHaveLength(1);
    await processRunMessage(await next(), { remainingMs: () => 50_000 });
    expect(await read(e)).toMatchObject({ status: 'SUCCEEDED', outputs: { call: { status: 200, attempts: 2 } } });
    expect(hits.get(path)).toHaveLength(2);
  });
});

it('refuses a bad retry policy at save, with its path', () => {
  const parse = (retry: unknown) =>
    WorkflowDefinition.safeParse({ steps: [{ id: 'a', type: 'http_request', url: 'https://x.example', retry }] });
  for (const [retry, field] of [
    [{ maxAttempts: 11 }, 'maxAttempts'],
    [{ maxAttempts: 0 }, 'maxAttempts'],
    [{ maxAttempts: 2, intervalSeconds: 3601 }, 'intervalSeconds'],
    [{ maxAttempts: 2, backoffRate: 0.5 }, 'backoffRate'],
    [{ maxAttempts: 2, maxDelaySeconds: 86_401 }, 'maxDelaySeconds'],
    [{ maxAttempts: 2, intervalSeconds: 10, maxDelaySeconds: 5 }, 'maxDelaySeconds'],
    [{ maxAttempts: 2, jitter: 'some' }, 'jitter'],
    [{ maxAttempts: 2, on: ['HTTP_500'] }, 'on'],
    [{ maxAttempts: 2, on: ['TIMEOUT', 'TIMEOUT'] }, 'on'],
    [{ maxAttempts: 2, extra: 1 }, ''],
  ] as const) {
    const r = parse(retry);
    expect(r.success, JSON.stringify(retry)).toBe(false);
    expect(r.error?.issues[0]?.path.join('.')).toMatch(new RegExp(`^steps\\.0\\.retry${field ? `\\.${field}` : ''}`));
  }
  expect(parse({ maxAttempts: 3 }).data?.steps[0]).toMatchObject({
    retry: { maxAttempts: 3, intervalSeconds: 1, backoffRate: 2, jitter: 'full', on: ['HTTP_5XX', 'HTTP_429', 'TIMEOUT', 'NETWORK'] },
  });
  expect(
    WorkflowDefinition.safeParse({ steps: [{ id: 'a', type: 'artifact', name: 'r', content: 1, retry: { maxAttempts: 2 } }] }).success,
  ).toBe(true);
  expect(WorkflowDefinition.safeParse({ steps: [{ id: 'a', type: 'set', values: {}, retry: { maxAttempts: 2 } }] }).success).toBe(false);
});
