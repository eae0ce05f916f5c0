import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '../../shared/config.ts';
import { getCallback } from '../../shared/db/entities/callback.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { expireDueCallbacks } from '../../shared/domain/callbacks.ts';
import { maskDefinition, restoreSecrets } from '../../shared/domain/definition-secrets.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { resumeRun } from '../../shared/engine/resume.ts';
import { sweepRestart } from '../../shared/engine/recovery.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { bearer, expectProblem, readResponse } from '../support/http.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';

// wait_for_callback over real HTTP: the local stack (server, workers, the scheduled sweep every
// second) on a table of its own (the sweep's clock is moved by hand in some tests), and a listener
// on 127.0.0.1 that the step's `request` reaches with `$callback.url` and `$callback.token`.
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let listener: Server;
let listenerUrl: string;
/** What the listener received, per path: the callback's url and token. */
const received = new Map<string, { url: string; token: string }>();

beforeAll(async () => {
  await useOwnTable();
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  ({ stack } = await localStackOnSharedEmulators('callbacks', { sweepSeconds: 1 }));
  listener = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      if (path.startsWith('/status/')) return void res.writeHead(Number(path.split('/')[2])).end('no');
      const got = JSON.parse(body) as { url: string; token: string };
      received.set(path, got);
      res.writeHead(202).end();
      // The job reports back as a CI system would: success with its result.
      if (path.startsWith('/report-success'))
        setTimeout(() => void report(got, { status: 'success', output: { build: 42, log: 'ok' } }), 10);
    });
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerUrl = `http://127.0.0.1:${(listener.address() as { port: number }).port}`;
});
afterAll(async () => {
  listener?.closeAllConnections();
  listener?.close();
  await stack?.stop();
});

/** The callback's url is under PUBLIC_BASE_URL; this test's server is the local stack's. */
const local = (url: string) => `${stack.url}${new URL(url).pathname}`;
const post = async (url: string, token: string | undefined, json?: unknown, raw?: string) =>
  readResponse(
    await fetch(local(url), {
      method: 'POST',
      headers: { ...(token === undefined ? {} : bearer(token)), 'content-type': 'application/json' },
      body: raw ?? (json === undefined ? undefined : JSON.stringify(json)),
    }),
  );
const report = (c: { url: string; token: string }, body: unknown) => post(c.url, c.token, body);

let paths = 0;
/** An API run of `steps` in a new account (or the one given). */
async function givenFlow(steps: unknown[], account?: Awaited<ReturnType<typeof givenAccount>>, trigger: 'api' | 'webhook' = 'api') {
  const { account: acc, admin } = account ?? (await givenAccount());
  const workflow = await createWorkflow(
    { accountId: acc.accountId, userId: admin.userId, role: 'admin' },
    { name: 'callback', definition: WorkflowDefinition.parse({ steps }), recovery: false, editors: [] },
  );
  return (await startRun({ workflow, trigger, variables: {} })).execution;
}
const givenRun = (wait: Record<string, unknown>, account?: Awaited<ReturnType<typeof givenAccount>>, trigger: 'api' | 'webhook' = 'api') =>
  givenFlow(
    [
      { id: 'wait', type: 'wait_for_callback', timeoutSeconds: 3600, ...wait },
      { id: 'after', type: 'set', values: { result: '{% $steps.wait %}' } },
    ],
    account,
    trigger,
  );
/** A run whose request reaches the listener at a fresh path: the callback as the listener got it. */
async function givenWaiting(
  extra: Record<string, unknown> = {},
  prefix = '/job',
  account?: Awaited<ReturnType<typeof givenAccount>>,
  trigger: 'api' | 'webhook' = 'api',
) {
  const path = `${prefix}/${++paths}`;
  const request = { method: 'POST', url: listenerUrl + path, body: "{% { 'url': $callback.url, 'token': $callback.token } %}" };
  const e = await givenRun({ request, ...extra }, account, trigger);
  const callback = await eventually(
    async () => received.get(path),
    (c) => c !== undefined,
  );
  await status(e, ['WAITING_CALLBACK', 'RUNNING', 'SUCCEEDED', 'FAILED']);
  const c = callback as { url: string; token: string };
  return { e: { ...e, callbackId: idOf(c) }, callback: c };
}
const idOf = (c: { url: string }) => new URL(c.url).pathname.split('/').at(-1) as string;
const read = (e: Execution) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const status = (e: Execution, statuses: string[]) =>
  eventually(
    () => read(e),
    (x) => statuses.includes(x.status),
  );
const eventsOf = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 100)).items;

describe('a wait_for_callback whose request reaches a listener', () => {
  it('the listener reports success with the token: the run goes on with $steps.<id>.output', async () => {
    const { e, callback } = await givenWaiting({}, '/report-success');
    expect(callback.url).toMatch(new RegExp(`^${config().PUBLIC_BASE_URL}/api/v1/callbacks/cb_[0-9a-z]{26}$`));
    expect(callback.token).toMatch(/^dyc_/);
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.variables.result).toEqual({ callbackId: expect.any(String), status: 'success', output: { build: 42, log: 'ok' } });
    const log = await eventsOf(e);
    expect(log.map((x) => x.type)).toEqual([
      'execution.started',
      'step.started',
      'callback.requested',
      'callback.reported',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'execution.succeeded',
    ]);
    const requested = log.find((x) => x.type === 'callback.requested');
    // The event has the url, never the token; the callback keeps only the token's hash.
    expect(requested?.data).toMatchObject({ url: callback.url, stepId: 'wait' });
    expect(JSON.stringify(log)).not.toContain(callback.token);
    const id = new URL(callback.url).pathname.split('/').at(-1) as string;
    const stored = await getCallback(e.accountId, id);
    expect(stored).toMatchObject({ status: 'SUCCEEDED' });
    expect(JSON.stringify(stored)).not.toContain(callback.token.slice(-49));
    // Seqs in order, the report right after the request.
    expect(log.map((x) => x.seq)).toEqual([...log.map((x) => x.seq)].sort((a, b) => (a as number) - (b as number)));
  });

  it('a failure report fails the step and the run with its error; a second report is 409', async () => {
    const { e, callback } = await givenWaiting();
    await status(e, ['WAITING_CALLBACK']);
    const res = await report(callback, { status: 'failure', error: { code: 'BUILD_FAILED', message: 'tests failed' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: 'FAILED', executionId: e.executionId });
    // Metered as the v1 routes are: the account's budget, in the rate-limit headers.
    expect(Number(res.headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'BUILD_FAILED', message: 'tests failed' } });
    expect(done.steps[0]).toMatchObject({ status: 'FAILED', error: { code: 'BUILD_FAILED' } });
    expectProblem(await report(callback, { status: 'success' }), 409, 'CALLBACK_ALREADY_HANDLED');
  });

  it('exactly once under real concurrency: of 12 reports at once one is 200, every other 409', async () => {
    const { e, callback } = await givenWaiting();
    await status(e, ['WAITING_CALLBACK']);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        report(callback, i % 2 ? { status: 'success', output: { i } } : { status: 'failure', error: { code: 'NO', message: String(i) } }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) expectProblem(a, 409, 'CALLBACK_ALREADY_HANDLED');
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    const winner = answers.find((a) => a.status === 200)?.json.status;
    expect(done.status).toBe(winner);
    expect((await eventsOf(e)).filter((x) => x.type === 'callback.reported')).toHaveLength(1);
  });

  it('refuses a wrong token (401), another account’s or an unknown callback (404), a body over 256 KiB (413), bad bodies (400)', async () => {
    const account = await givenAccount();
    const mine = await givenAccount();
    const { e, callback } = await givenWaiting({}, '/job', mine);
    await status(e, ['WAITING_CALLBACK']);
    const other = await givenWaiting({}, '/job', mine);
    await status(other.e, ['WAITING_CALLBACK']);
    // A token of another callback, a token that is not one, none at all.
    expectProblem(await report({ url: callback.url, token: other.callback.token }, { status: 'success' }), 401, 'INVALID_CALLBACK_TOKEN');
    expectProblem(
      await report(
        { url: callback.url, token: `${callback.token.slice(0, -1)}${callback.token.endsWith('x') ? 'y' : 'x'}` },
        { status: 'success' },
      ),
      401,
      'INVALID_CALLBACK_TOKEN',
    );
    expectProblem(await post(callback.url, undefined, { status: 'success' }), 401, 'UNAUTHORIZED');
    // Another account's callback with this account's token (and the reverse), and an id nobody has.
    const theirs = await givenRun({}, account);
    const theirCallback = (
      await eventually(
        () => read(theirs),
        (x) => x.callbackId !== undefined,
      )
    ).callbackId as string;
    expectProblem(
      await report({ url: `${callback.url.replace(/cb_.*$/, theirCallback)}`, token: callback.token }, { status: 'success' }),
      404,
      'CALLBACK_NOT_FOUND',
    );
    expectProblem(
      await report({ url: callback.url.replace(/cb_.*$/, 'cb_00000000000000000000000000'), token: callback.token }, { status: 'success' }),
      404,
      'CALLBACK_NOT_FOUND',
    );
    expectProblem(
      await report({ url: callback.url.replace(/cb_.*$/, 'nope'), token: callback.token }, { status: 'success' }),
      404,
      'CALLBACK_NOT_FOUND',
    );
    expectProblem(
      await post(callback.url, callback.token, undefined, JSON.stringify({ status: 'success', output: { x: 'y'.repeat(256 * 1024) } })),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    for (const body of [
      { status: 'done' },
      { status: 'failure' },
      { status: 'failure', error: { code: 'lower', message: 'x' } },
      { status: 'success', output: [1] },
    ])
      expect((await report(callback, body)).status, JSON.stringify(body)).toBe(400);
    // Nothing of that changed the waits.
    expect((await read(e)).status).toBe('WAITING_CALLBACK');
    expect((await getCallback(e.accountId, e.callbackId as string))?.status).toBe('PENDING');
    for (const c of [callback, other.callback]) expect((await report(c, { status: 'success' })).status).toBe(200);
    await cancelRun(account.account.accountId, theirs.executionId, 'done');
  });

  it('a request that fails (the listener answers 500) fails the step with its error', async () => {
    const e = await givenRun({ request: { method: 'POST', url: `${listenerUrl}/status/500`, body: '{% { "token": $callback.token } %}' } });
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done).toMatchObject({
      status: 'FAILED',
      error: { code: 'HTTP_STATUS', message: expect.stringMatching(/^The callback request failed: POST 127\.0\.0\.1:\d+ answered 500\.$/) },
    });
  });

  it('cancel of a waiting run cancels its callback: a later report is 409', async () => {
    const { e, callback } = await givenWaiting();
    await status(e, ['WAITING_CALLBACK']);
    const cancelled = await cancelRun(e.accountId, e.executionId, 'not needed');
    expect(cancelled).toMatchObject({ status: 'CANCELLED', steps: [{ status: 'CANCELLED' }, { status: 'CANCELLED' }] });
    expect((await getCallback(e.accountId, e.callbackId as string))?.status).toBe('CANCELLED');
    expectProblem(await report(callback, { status: 'success' }), 409, 'CALLBACK_ALREADY_HANDLED');
    expectProblem(await post(`${callback.url}/heartbeat`, callback.token), 409, 'CALLBACK_ALREADY_HANDLED');
  });
});

describe('a wait_for_callback in control flow', () => {
  /** What the listener got at `path`, once it got it. */
  const receivedAt = async (path: string) =>
    (await eventually(
      async () => received.get(path),
      (c) => c !== undefined,
    )) as { url: string; token: string; item?: string };

  it('a failure report with onError { next } jumps: the step is FAILED, $steps.<id>.error holds the reported error', async () => {
    const path = `/job/${++paths}`;
    const e = await givenFlow([
      {
        id: 'wait',
        type: 'wait_for_callback',
        timeoutSeconds: 3600,
        onError: { next: 'recover' },
        request: { method: 'POST', url: listenerUrl + path, body: "{% { 'url': $callback.url, 'token': $callback.token } %}" },
      },
      { id: 'after', type: 'set', values: { shipped: true }, next: '$end' },
      { id: 'recover', type: 'set', values: { why: '{% $steps.wait.error.code %}', said: '{% $steps.wait.error.message %}' } },
    ]);
    const callback = await receivedAt(path);
    await status(e, ['WAITING_CALLBACK']);
    const res = await report(callback, { status: 'failure', error: { code: 'BUILD_FAILED', message: 'tests failed' } });
    expect(res.status, res.text).toBe(200);
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.variables).toEqual({ why: 'BUILD_FAILED', said: 'tests failed' });
    expect(done.steps.map((s) => s.status)).toEqual(['FAILED', 'PENDING', 'SUCCEEDED']);
    expect(done.steps[0]).toMatchObject({ error: { code: 'BUILD_FAILED', message: 'tests failed' } });
    const log = (await eventsOf(e)).map((x) => `${x.type}${x.data.stepId ? ` ${x.data.stepId}` : ''}`);
    expect(log).toEqual([
      'execution.started',
      'step.started wait',
      'callback.requested wait',
      'callback.reported wait',
      'step.failed wait',
      'step.started recover',
      'step.succeeded recover',
      'execution.succeeded',
    ]);
  });

  it('a timeout with onTimeout "fail" goes through onError too ("continue": the run goes on with the error)', async () => {
    const path = `/job/${++paths}`;
    const e = await givenFlow([
      {
        id: 'wait',
        type: 'wait_for_callback',
        timeoutSeconds: 60,
        onError: 'continue',
        request: { method: 'POST', url: listenerUrl + path, body: "{% { 'url': $callback.url, 'token': $callback.token } %}" },
      },
      { id: 'after', type: 'set', values: { why: '{% $steps.wait.error.code %}' } },
    ]);
    await receivedAt(path);
    await status(e, ['WAITING_CALLBACK']);
    await expireDueCallbacks(Date.now() + 61_000);
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done).toMatchObject({ status: 'SUCCEEDED', variables: { why: 'CALLBACK_TIMED_OUT' } });
    expect(done.steps[0]).toMatchObject({ status: 'FAILED', error: { code: 'CALLBACK_TIMED_OUT' } });
  });

  it('inside a for_each: one callback per iteration, its request sees $item, each report resumes that iteration', async () => {
    const tag = ++paths;
    const e = await givenFlow([
      {
        id: 'each',
        type: 'for_each',
        items: "{% ['x', 'y'] %}",
        steps: [
          {
            id: 'wait',
            type: 'wait_for_callback',
            timeoutSeconds: 3600,
            request: {
              method: 'POST',
              url: `{% '${listenerUrl}/loop/${tag}-' & $item %}`,
              body: "{% { 'url': $callback.url, 'token': $callback.token, 'item': $item } %}",
            },
          },
          { id: 'keep', type: 'set', values: { got: "{% { 'item': $item, 'build': $steps.wait.output.build } %}" } },
        ],
      },
    ]);
    for (const [i, item] of ['x', 'y'].entries()) {
      const callback = await receivedAt(`/loop/${tag}-${item}`);
      expect(callback.item).toBe(item);
      const waiting = await status(e, ['WAITING_CALLBACK']);
      expect(waiting.loop).toMatchObject({ stepId: 'each', iteration: i });
      const res = await report(callback, { status: 'success', output: { build: 10 + i } });
      expect(res.status, res.text).toBe(200);
    }
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.outputs.each).toEqual({
      items: 2,
      results: [{ got: { item: 'x', build: 10 } }, { got: { item: 'y', build: 11 } }],
    });
    const requested = (await eventsOf(e)).filter((x) => x.type === 'callback.requested');
    expect(requested.map((x) => [x.data.stepId, x.data.iteration])).toEqual([
      ['wait', 0],
      ['wait', 1],
    ]);
    expect(new Set(requested.map((x) => x.data.callbackId)).size).toBe(2);
  });
});

describe('a restart while a webhook run waits for its callback', () => {
  it('interrupts it; a report meanwhile is recorded (200) and a resume applies it; a run resumed before any report waits again', async () => {
    const reported = await givenWaiting({}, '/job', undefined, 'webhook');
    const pending = await givenWaiting({}, '/job', undefined, 'webhook');
    for (const w of [reported, pending]) await status(w.e, ['WAITING_CALLBACK']);
    await sweepRestart({ rule: 'all' });
    for (const w of [reported, pending]) expect(await read(w.e)).toMatchObject({ status: 'INTERRUPTED', callbackId: w.e.callbackId });

    const res = await report(reported.callback, { status: 'success', output: { late: true } });
    expect(res.status, res.text).toBe(200);
    expect((await read(reported.e)).status).toBe('INTERRUPTED');
    await resumeRun(reported.e.accountId, reported.e.executionId, 'usr_test');
    const done = await status(reported.e, ['SUCCEEDED', 'FAILED']);
    expect(done.variables.result).toMatchObject({ status: 'success', output: { late: true } });

    const again = await resumeRun(pending.e.accountId, pending.e.executionId, 'usr_test');
    expect(again).toMatchObject({ status: 'WAITING_CALLBACK', callbackId: pending.e.callbackId });
    expect((await report(pending.callback, { status: 'success' })).status).toBe(200);
    expect((await status(pending.e, ['SUCCEEDED', 'FAILED'])).status).toBe('SUCCEEDED');
    // Every event numbered once, in the order written, across the interruption.
    for (const w of [reported, pending]) {
      const seqs = (await eventsOf(w.e)).map((x) => x.seq as number);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });
});

describe('deadlines, from the scheduled sweep', () => {
  it('timeout by the sweep’s clock: onTimeout "fail" fails the run CALLBACK_TIMED_OUT, "continue" goes on', async () => {
    const failing = await givenRun({ timeoutSeconds: 1 });
    const continuing = await givenRun({ timeoutSeconds: 1, onTimeout: 'continue' });
    // The local stack's sweep runs every second.
    const failed = await status(failing, ['SUCCEEDED', 'FAILED']);
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'CALLBACK_TIMED_OUT' } });
    const went = await status(continuing, ['SUCCEEDED', 'FAILED']);
    expect(went.status).toBe('SUCCEEDED');
    expect(went.variables.result).toEqual({ callbackId: expect.any(String), status: 'timed_out', output: null });
    expect((await eventsOf(failing)).map((x) => x.type)).toContain('callback.expired');
  });

  it('heartbeats move the deadline; a missed one ends the wait', async () => {
    const { e, callback } = await givenWaiting({ heartbeatSeconds: 20 });
    await status(e, ['WAITING_CALLBACK']);
    const first = await getCallback(e.accountId, e.callbackId as string);
    const beat = await post(`${callback.url}/heartbeat`, callback.token);
    expect(beat.status, beat.text).toBe(200);
    expect(beat.json).toMatchObject({ status: 'PENDING', callbackId: e.callbackId });
    expect(beat.json.deadline).toBeGreaterThanOrEqual(first?.deadline as number);
    expect(beat.json.deadline).toBeLessThan(beat.json.timeoutAt);
    expectProblem(await post(`${callback.url}/heartbeat`, other401(callback.token)), 401, 'INVALID_CALLBACK_TOKEN');
    // The sweep, its clock just before the heartbeat's due time: nothing ends; just after: the wait ends.
    expect(await expireDueCallbacks(beat.json.deadline - 1)).toBe(0);
    expect((await read(e)).status).toBe('WAITING_CALLBACK');
    expect(await expireDueCallbacks(beat.json.deadline + 1)).toBe(1);
    const done = await status(e, ['SUCCEEDED', 'FAILED']);
    expect(done).toMatchObject({ status: 'FAILED', error: { code: 'CALLBACK_TIMED_OUT', message: expect.stringContaining('heartbeat') } });
    expectProblem(await report(callback, { status: 'success' }), 409, 'CALLBACK_ALREADY_HANDLED');
  });
});

/** A well-formed token of the same account that is not this callback's. */
const other401 = (token: string) => `${token.slice(0, -7)}${token.at(-7) === 'a' ? 'b' : 'a'}${token.slice(-6)}`;

describe('the request of a wait_for_callback holds secrets as an http_request does', () => {
  const def = (headers: Record<string, string>) =>
    WorkflowDefinition.parse({
      steps: [
        {
          id: 'w',
          type: 'wait_for_callback',
          timeoutSeconds: 60,
          request: { method: 'POST', url: 'https://ci.example.com/jobs', headers, body: '{% { "token": $callback.token } %}' },
        },
      ],
    });

  it('masks literal credential headers in views, keeps them on an update that sends the mask back, and takes $secrets', () => {
    const stored = def({ authorization: 'Bearer literal-ci-token-123456', 'x-trace': 'abc' });
    const shown = maskDefinition(stored);
    expect(JSON.stringify(shown)).not.toContain('literal-ci-token');
    expect((shown.steps[0] as { request: { headers: Record<string, string> } }).request.headers).toEqual({
      authorization: '••••3456',
      'x-trace': 'abc',
    });
    expect(restoreSecrets(shown, stored)).toEqual(stored);
    expect(() => restoreSecrets(shown, undefined)).toThrow();
    expect(
      WorkflowDefinition.safeParse({ steps: [{ ...def({ authorization: "{% 'Bearer ' & $secrets.CI_TOKEN %}" }).steps[0] }] }).success,
    ).toBe(true);
    // ... but not elsewhere in the step.
    const misplaced = WorkflowDefinition.safeParse({
      steps: [{ id: 'w', type: 'wait_for_callback', timeoutSeconds: 60, when: '{% $secrets.X = "a" %}' }],
    });
    expect(misplaced.success).toBe(false);
  });

  it('refuses bad waits at save, with their paths', () => {
    const parse = (step: Record<string, unknown>) =>
      WorkflowDefinition.safeParse({ steps: [{ id: 'w', type: 'wait_for_callback', timeoutSeconds: 60, ...step }] });
    for (const [step, path] of [
      [{ timeoutSeconds: 0 }, 'timeoutSeconds'],
      [{ timeoutSeconds: 31_536_001 }, 'timeoutSeconds'],
      [{ heartbeatSeconds: 61 }, 'heartbeatSeconds'],
      [{ onTimeout: 'approve' }, 'onTimeout'],
      [{ request: { url: 'ftp://x' } }, 'request.url'],
      [{ request: { url: 'https://x.example', method: 'GET', body: 'x' } }, 'request.body'],
      [{ request: { url: 'https://x.example', saveAs: 'x' } }, 'request'],
      [{ request: { url: '{% $callback.url & ' } }, 'request.url'],
    ] as const) {
      const r = parse(step);
      expect(r.success, JSON.stringify(step)).toBe(false);
      expect(r.error?.issues[0]?.path.join('.'), JSON.stringify(step)).toBe(`steps.0.${path}`);
    }
  });
});
