import { beforeAll, describe, expect, it } from 'vitest';
import { handler as downloadHandler } from '../../functions/http/v1/artifacts/download.ts';
import { handler as artifactsHandler } from '../../functions/http/v1/artifacts/list.ts';
import { handler as cancelHandler } from '../../functions/http/v1/executions/cancel.ts';
import { handler as eventsHandler } from '../../functions/http/v1/executions/events.ts';
import { handler as getHandler } from '../../functions/http/v1/executions/get.ts';
import { handler as listHandler } from '../../functions/http/v1/executions/list.ts';
import { handler as resultHandler } from '../../functions/http/v1/executions/result.ts';
import { handler as startRunHandler } from '../../functions/http/v1/workflows/start-run.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';

/** The v1 run endpoints (start, executions, result, events, cancel, artifacts) through the handlers. */

type Res = Awaited<ReturnType<typeof invoke>>;
type Account = Awaited<ReturnType<typeof givenAccount>>;

const KiB = 1024;

const start = (token: string, workflowId: string, body?: unknown, headers: Record<string, string> = {}) =>
  invoke(
    startRunHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/workflows/${workflowId}/runs`,
      headers: { ...bearer(token), ...headers },
      params: { workflowId },
      ...(body === undefined ? {} : { body: body as object }),
    }),
  );
const getExec = (token: string, executionId: string) =>
  invoke(getHandler, apiEvent({ path: `/api/v1/executions/${executionId}`, headers: bearer(token), params: { executionId } }));
const listExecs = (token: string, query?: Record<string, string>) =>
  invoke(listHandler, apiEvent({ path: '/api/v1/executions', headers: bearer(token), ...(query ? { query } : {}) }));
const result = (token: string, executionId: string) =>
  invoke(resultHandler, apiEvent({ path: `/api/v1/executions/${executionId}/result`, headers: bearer(token), params: { executionId } }));
const events = (token: string, executionId: string, query?: Record<string, string>) =>
  invoke(
    eventsHandler,
    apiEvent({
      path: `/api/v1/executions/${executionId}/events`,
      headers: bearer(token),
      params: { executionId },
      ...(query ? { query } : {}),
    }),
  );
const cancel = (token: string, executionId: string, body?: unknown) =>
  invoke(
    cancelHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/executions/${executionId}/cancel`,
      headers: bearer(token),
      params: { executionId },
      ...(body === undefined ? {} : { body: body as object }),
    }),
  );
const artifacts = (token: string, executionId: string) =>
  invoke(
    artifactsHandler,
    apiEvent({ path: `/api/v1/executions/${executionId}/artifacts`, headers: bearer(token), params: { executionId } }),
  );
const download = (token: string, executionId: string, artifactId: string, query?: Record<string, string>) =>
  invoke(
    downloadHandler,
    apiEvent({
      path: `/api/v1/executions/${executionId}/artifacts/${artifactId}/download`,
      headers: bearer(token),
      params: { executionId, artifactId },
      ...(query ? { query } : {}),
    }),
  );

const pathsOf = (res: Res) => (res.json?.errors ?? []).map((e: { path: string }) => e.path);
const idsOf = (res: Res) => res.json.items.map((e: { executionId: string }) => e.executionId);
const tick = () => new Promise((r) => setTimeout(r, 3));

/** Every page of a list, following `nextCursor` (a filtered page may be short or even empty). */
async function allPages(read: (cursor?: string) => Promise<Res>, limit: number) {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const res = await read(cursor);
    expect(res.status, res.body?.slice(0, 500)).toBe(200);
    expect(res.json.items.length).toBeLessThanOrEqual(limit);
    items.push(...res.json.items);
    if (res.json.nextCursor === null) return items;
    cursor = res.json.nextCursor;
  }
  throw new Error('more than 100 pages');
}

const keyWith = async (u: { accountId: string; userId: string }, scopes: Scope[]) =>
  (await createKey({ accountId: u.accountId, userId: u.userId }, { name: scopes.join('+'), scopes, validityDays: 1 })).token;

const newWorkflow = (a: Account, definition: unknown, name = 'wf') =>
  createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name, definition: WorkflowDefinition.parse(definition), recovery: false, editors: [] },
  );

/** Run a PENDING execution to its end in-process (no poller runs in this file). */
async function runToEnd(accountId: string, executionId: string) {
  const e = await getExecution(accountId, executionId);
  expect(e?.dispatch).toEqual(expect.any(String));
  await processRunMessage({ accountId, executionId, dispatch: e?.dispatch as string }, { remainingMs: () => 30_000 });
  return getExecution(accountId, executionId);
}

const TYPED = {
  variables: {
    env: { type: 'string', default: 'staging' },
    amount: { type: 'number' },
    urgent: { type: 'boolean', default: false },
    labels: { type: 'array', default: ['a'] },
    meta: { type: 'object' },
  },
  steps: [
    { id: 'first', type: 'set', values: { x: 1 } },
    { id: 'second', type: 'delay', seconds: 5 },
  ],
};
const ARTIFACT = {
  steps: [
    { id: 'make', type: 'set', values: { n: 41 } },
    { id: 'report', type: 'artifact', name: 'report "q".json', content: '{% { "n": $vars.n + 1 } %}' },
  ],
};
/** Fields of the stored execution that never leave the service. */
const INTERNAL = ['definition', 'lease', 'dispatch', 'input', 'outputs', 'accountId', 'nextStep', 'keyId', 'idempotencyKey', 'startedBy'];

beforeAll(async () => {
  await useOwnQueues();
});

describe('POST /api/v1/workflows/{workflowId}/runs', () => {
  let a: Account;
  let typed: Awaited<ReturnType<typeof newWorkflow>>;
  let simple: Awaited<ReturnType<typeof newWorkflow>>;
  const countRuns = async (workflowId: string) =>
    (await allPages((cursor) => listExecs(a.adminKey.token, { workflowId, limit: '100', ...(cursor ? { cursor } : {}) }), 100)).length;

  beforeAll(async () => {
    a = await givenAccount();
    typed = await newWorkflow(a, TYPED, 'typed');
    simple = await newWorkflow(a, { steps: [{ id: 'only', type: 'set', values: { y: 1 } }] }, 'simple');
  });

  it('answers 202 with Location and the execution record (defaults applied), without internals', async () => {
    const res = await start(a.memberKey.token, typed.workflowId, { variables: { env: 'prod', amount: 3, extra: { kept: true } } });
    expect(res.status, res.body).toBe(202);
    expect(res.json.executionId).toMatch(/^ex_[0-9a-z]{26}$/);
    expect(res.headers.location).toBe(`/api/v1/executions/${res.json.executionId}`);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.headers['x-ratelimit-limit']).toEqual(expect.any(String));
    expect(res.json).toMatchObject({
      workflowId: typed.workflowId,
      trigger: 'api',
      status: 'PENDING',
      variables: { env: 'prod', amount: 3, urgent: false, labels: ['a'], extra: { kept: true } },
      steps: [
        { stepId: 'first', type: 'set', status: 'PENDING' },
        { stepId: 'second', type: 'delay', status: 'PENDING' },
      ],
    });
    expect(res.json.variables).not.toHaveProperty('meta');
    expect(res.json.startedAt).toBe(res.json.updatedAt);
    for (const field of INTERNAL) expect(res.json, field).not.toHaveProperty(field);
    expect(res.json).not.toHaveProperty('finishedAt');
    expect(res.json).not.toHaveProperty('error');

    const got = await getExec(a.adminKey.token, res.json.executionId);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);

    // No body at all, or an empty object, starts a run with the defaults.
    for (const body of [undefined, {}, { variables: {} }]) {
      const r = await start(a.adminKey.token, simple.workflowId, body);
      expect(r.status, r.body).toBe(202);
      expect(r.json.variables).toEqual({});
    }
  });

  it('refuses a declared variable of the wrong type with 400 at variables.<name>, writing nothing', async () => {
    const before = await countRuns(typed.workflowId);
    const one = await start(a.adminKey.token, typed.workflowId, { variables: { amount: '3' } });
    expectProblem(one, 400, 'VALIDATION_FAILED');
    expect(one.json.errors).toEqual([{ path: 'variables.amount', message: expect.any(String) }]);

    const many = await start(a.adminKey.token, typed.workflowId, {
      variables: { env: 1, amount: Number.MAX_VALUE, urgent: 'yes', labels: { 0: 'a' }, meta: [], free: 'anything' },
    });
    expectProblem(many, 400, 'VALIDATION_FAILED');
    expect(pathsOf(many).sort()).toEqual(['variables.env', 'variables.labels', 'variables.meta', 'variables.urgent']);

    for (const body of [{ variables: 'x' }, { variables: [1] }, { variables: null }]) {
      const r = await start(a.adminKey.token, typed.workflowId, body);
      expectProblem(r, 400, 'VALIDATION_FAILED');
      expect(pathsOf(r)).toEqual(['variables']);
    }
    const tooBig = await start(a.adminKey.token, typed.workflowId, { variables: { blob: 'x'.repeat(300 * KiB) } });
    expectProblem(tooBig, 400, 'VALIDATION_FAILED');
    expect(pathsOf(tooBig)).toEqual(['variables']);
    expectProblem(
      await start(a.adminKey.token, typed.workflowId, { variables: { blob: 'x'.repeat(520 * KiB) } }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(await countRuns(typed.workflowId)).toBe(before);
  });

  it('a key without WORKFLOW_EXECUTE gets 403 INSUFFICIENT_SCOPE; an unknown workflow is 404', async () => {
    const readOnly = await keyWith(a.member, ['WORKFLOW_READ', 'WEBHOOK_TRIGGER', 'APPROVAL_RESPOND']);
    const before = await countRuns(simple.workflowId);
    expectProblem(await start(readOnly, simple.workflowId, {}), 403, 'INSUFFICIENT_SCOPE');
    expect(await countRuns(simple.workflowId)).toBe(before);
    expectProblem(await start(a.adminKey.token, 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz', {}), 404, 'WORKFLOW_NOT_FOUND');
    for (const bad of ['wf_nope', '../runs', simple.workflowId.toUpperCase()])
      expect((await start(a.adminKey.token, bad, {})).status, bad).toBe(404);
    const noKey = await invoke(
      startRunHandler,
      apiEvent({
        method: 'POST',
        path: `/api/v1/workflows/${simple.workflowId}/runs`,
        params: { workflowId: simple.workflowId },
        body: {},
      }),
    );
    expectProblem(noKey, 401, 'UNAUTHORIZED');
    expect(noKey.headers['www-authenticate']).toBe('Bearer');
  });

  it('Idempotency-Key: the same key and body replay the first execution; another body is 409', async () => {
    const key = `order-${Math.random().toString(36).slice(2)}`;
    const body = { variables: { amount: 5, note: 'first' } };
    const first = await start(a.adminKey.token, typed.workflowId, body, { 'idempotency-key': key });
    expect(first.status, first.body).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const again = await start(a.memberKey.token, typed.workflowId, body, { 'idempotency-key': key });
    expect(again.status, again.body).toBe(202);
    expect(again.json.executionId).toBe(first.json.executionId);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(`/api/v1/executions/${first.json.executionId}`);
    for (const field of INTERNAL) expect(again.json, field).not.toHaveProperty(field);

    const reused = await start(a.adminKey.token, typed.workflowId, { variables: { amount: 6, note: 'first' } }, { 'idempotency-key': key });
    expectProblem(reused, 409, 'IDEMPOTENCY_KEY_REUSED');

    // Without the header every request is a new run.
    const plain1 = await start(a.adminKey.token, typed.workflowId, body);
    const plain2 = await start(a.adminKey.token, typed.workflowId, body);
    expect(new Set([first.json.executionId, plain1.json.executionId, plain2.json.executionId]).size).toBe(3);

    // Another account's identical key and body is its own run.
    const b = await givenAccount();
    const theirs = await newWorkflow(b, TYPED);
    const other = await start(b.adminKey.token, theirs.workflowId, body, { 'idempotency-key': key });
    expect(other.status).toBe(202);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.json.executionId).not.toBe(first.json.executionId);
  });

  it('Idempotency-Key: concurrent requests with one key make exactly one execution', async () => {
    const key = `burst-${Math.random().toString(36).slice(2)}`;
    const results = await Promise.all(
      Array.from({ length: 4 }, () => start(a.adminKey.token, simple.workflowId, { variables: { n: 1 } }, { 'idempotency-key': key })),
    );
    for (const r of results) expect(r.status, r.body).toBe(202);
    expect(new Set(results.map((r) => r.json.executionId)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
  });

  it('an invalid Idempotency-Key is 400 INVALID_IDEMPOTENCY_KEY and writes nothing', async () => {
    const before = await countRuns(simple.workflowId);
    for (const key of ['k'.repeat(300), 'k'.repeat(256), 'has space', '', 'tab\there', 'ключ', 'new\nline', 'del\x7f']) {
      const res = await start(a.adminKey.token, simple.workflowId, { variables: {} }, { 'idempotency-key': key });
      expectProblem(res, 400, 'INVALID_IDEMPOTENCY_KEY');
    }
    expect(await countRuns(simple.workflowId)).toBe(before);
    const longest = await start(a.adminKey.token, simple.workflowId, { variables: {} }, { 'idempotency-key': `${'k'.repeat(254)}~` });
    expect(longest.status, longest.body).toBe(202);
    expect(await countRuns(simple.workflowId)).toBe(before + 1);
  });
});

describe('start run: JSON the store must hold (never a 500)', () => {
  let a: Account;
  let wf: Awaited<ReturnType<typeof newWorkflow>>;
  beforeAll(async () => {
    a = await givenAccount();
    wf = await newWorkflow(a, { steps: [{ id: 'only', type: 'set', values: { y: 1 } }] });
  });

  it('accepts variables up to the documented 256 KiB (the record keeps input and variables)', async () => {
    const res = await start(a.adminKey.token, wf.workflowId, { variables: { blob: 'x'.repeat(250 * KiB) } });
    expect(res.status, res.body?.slice(0, 300)).toBe(202);
    expect((await getExec(a.adminKey.token, res.json.executionId)).json.variables.blob).toHaveLength(250 * KiB);
  });

  it('refuses with a precise 400 a run whose variables outgrow 256 KiB once a 200 KiB default is applied; the definition takes no room', async () => {
    const big = await newWorkflow(a, {
      variables: { text: { type: 'string', default: 'y'.repeat(200 * KiB) } },
      steps: [{ id: 'only', type: 'set', values: { y: 1 } }],
    });
    // The run references its workflow's version and holds no copy of the definition: the default alone fits.
    const fits = await start(a.adminKey.token, big.workflowId, {});
    expect(fits.status, fits.body?.slice(0, 300)).toBe(202);
    expect((await getExec(a.adminKey.token, fits.json.executionId)).json.variables.text).toHaveLength(200 * KiB);
    const res = await start(a.adminKey.token, big.workflowId, { variables: { blob: 'x'.repeat(200 * KiB) } });
    expect(res.status, res.body?.slice(0, 300)).toBe(400);
    expect(res.json.code).toBe('VALIDATION_FAILED');
    expect(res.json.errors).toEqual([{ path: 'variables', message: 'must be at most 262144 bytes as JSON' }]);
  });

  // Valid JSON values: the run starts with them exactly, or the request is refused with a 400 that names
  // the variable; a 500 is never right.
  const deep = (n: number): unknown => (n === 0 ? 'bottom' : { d: deep(n - 1) });
  const cases: [string, Record<string, unknown>][] = [
    ['an integer beyond 2^53', { n: 1e16 }],
    ['a huge double', { n: 1.7976931348623157e308 }],
    ['a tiny double', { n: 5e-324 }],
    ['an empty key', { '': 1 }],
    ['an empty nested key', { o: { '': 'x' } }],
    ['a key named constructor', { o: { constructor: 1 } }],
    ['constructor shaped like a Map', { o: { constructor: { name: 'Map' } } }],
    ['an object nested 40 levels', { deep: deep(40) }],
  ];
  for (const [what, variables] of cases) {
    it(`variables with ${what}`, async () => {
      const res = await start(a.adminKey.token, wf.workflowId, { variables });
      expect(res.status, `${JSON.stringify(variables).slice(0, 200)} -> ${res.status} ${res.body?.slice(0, 300)}`).toBeLessThan(500);
      if (res.status === 202) {
        expect(res.json.variables).toEqual(variables);
        expect((await getExec(a.adminKey.token, res.json.executionId)).json.variables).toEqual(variables);
      } else {
        expectProblem(res, 400, 'VALIDATION_FAILED');
        expect(
          pathsOf(res).every((p: string) => p === 'variables' || p.startsWith('variables.')),
          res.body,
        ).toBe(true);
      }
    });
  }
});

describe('executions: read, list, result, events, artifacts', () => {
  let a: Account;
  let wf1: Awaited<ReturnType<typeof newWorkflow>>;
  let wf2: Awaited<ReturnType<typeof newWorkflow>>;
  /** Oldest first: r1 api, r2 api (cancelled), r3 api on wf1; r4 webhook, r5 rerun on wf2. */
  const r: string[] = [];

  beforeAll(async () => {
    a = await givenAccount();
    wf1 = await newWorkflow(a, TYPED, 'one');
    wf2 = await newWorkflow(a, { steps: [{ id: 'only', type: 'set', values: { y: 1 } }] }, 'two');
    for (let i = 0; i < 3; i++) {
      const res = await start(a.adminKey.token, wf1.workflowId, { variables: { amount: i } });
      expect(res.status).toBe(202);
      r.push(res.json.executionId);
      await tick();
    }
    expect((await cancel(a.adminKey.token, r[1] as string)).status).toBe(200);
    const viaWebhook = await startRun({ workflow: wf2, trigger: 'webhook', variables: { from: 'hook' } });
    r.push(viaWebhook.execution.executionId);
    await tick();
    const rerun = await startRun({
      workflow: wf2,
      trigger: 'rerun',
      variables: { from: 'hook' },
      rerunOf: viaWebhook.execution.executionId,
    });
    r.push(rerun.execution.executionId);
  });

  const list = (query: Record<string, string> = {}) => listExecs(a.memberKey.token, query);
  const at = (...i: number[]) => i.map((n) => r[n - 1]);

  it('reads one execution with its steps', async () => {
    const res = await getExec(a.memberKey.token, r[0] as string);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ executionId: r[0], workflowId: wf1.workflowId, trigger: 'api', status: 'PENDING' });
    expect(res.json.steps.map((s: { stepId: string }) => s.stepId)).toEqual(['first', 'second']);
    for (const field of INTERNAL) expect(res.json, field).not.toHaveProperty(field);
    const rerun = await getExec(a.memberKey.token, r[4] as string);
    expect(rerun.json).toMatchObject({ trigger: 'rerun', rerunOf: r[3] });
    expectProblem(await getExec(a.memberKey.token, 'ex_01jzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'EXECUTION_NOT_FOUND');
  });

  it('lists newest first, with workflowId, status and trigger filters, each paging to the same items', async () => {
    const cases: [Record<string, string>, (string | undefined)[]][] = [
      [{}, at(5, 4, 3, 2, 1)],
      [{ workflowId: wf1.workflowId }, at(3, 2, 1)],
      [{ workflowId: wf2.workflowId }, at(5, 4)],
      [{ status: 'CANCELLED' }, at(2)],
      [{ status: 'PENDING' }, at(5, 4, 3, 1)],
      [{ status: 'SUCCEEDED' }, []],
      [{ trigger: 'api' }, at(3, 2, 1)],
      [{ trigger: 'webhook' }, at(4)],
      [{ trigger: 'rerun' }, at(5)],
      [{ workflowId: wf1.workflowId, status: 'PENDING', trigger: 'api' }, at(3, 1)],
      [{ workflowId: wf2.workflowId, trigger: 'api' }, []],
      [{ workflowId: 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz' }, []],
    ];
    for (const [filters, expected] of cases) {
      const whole = await list(filters);
      expect(whole.status, JSON.stringify(filters)).toBe(200);
      expect(idsOf(whole), JSON.stringify(filters)).toEqual(expected);
      for (const item of whole.json.items) for (const field of INTERNAL) expect(item).not.toHaveProperty(field);
      for (const limit of [1, 2]) {
        const paged = await allPages((cursor) => list({ ...filters, limit: String(limit), ...(cursor ? { cursor } : {}) }), limit);
        expect(
          paged.map((e) => e.executionId),
          `${JSON.stringify(filters)} limit ${limit}`,
        ).toEqual(expected);
      }
    }
  });

  it('refuses a cursor used with other filters, a tampered cursor and bad filter values', async () => {
    const cursorOf = async (query: Record<string, string>) => {
      const res = await list({ ...query, limit: '1' });
      expect(res.json.nextCursor, JSON.stringify(query)).toEqual(expect.any(String));
      return res.json.nextCursor as string;
    };
    const pending = await cursorOf({ status: 'PENDING' });
    const byWf1 = await cursorOf({ workflowId: wf1.workflowId });
    const unfiltered = await cursorOf({});
    // Each works with its own query...
    expect((await list({ status: 'PENDING', limit: '1', cursor: pending })).status).toBe(200);
    expect((await list({ workflowId: wf1.workflowId, limit: '1', cursor: byWf1 })).status).toBe(200);
    expect((await list({ limit: '3', cursor: unfiltered })).status).toBe(200);
    // ...and with no other.
    for (const [query, cursor] of [
      [{ status: 'CANCELLED' }, pending],
      [{}, pending],
      [{ status: 'PENDING', trigger: 'api' }, pending],
      [{ workflowId: wf2.workflowId }, byWf1],
      [{}, byWf1],
      [{ status: 'PENDING' }, unfiltered],
      [{ trigger: 'webhook' }, unfiltered],
    ] as [Record<string, string>, string][]) {
      expectProblem(await list({ ...query, cursor }), 400, 'INVALID_CURSOR');
    }
    const [payload, mac] = unfiltered.split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const cursor of [flip(unfiltered, 2), `${payload}.${flip(mac, 0)}`, payload, `${unfiltered}.`, 'x.y', 'e30.e30', '']) {
      const res = await list({ cursor });
      expect(res.status, cursor).toBe(400);
      expect(res.json.code).toMatch(/^(INVALID_CURSOR|VALIDATION_FAILED)$/);
    }
    // A cursor from an event log is not an executions cursor.
    const evCursor = (await events(a.memberKey.token, r[1] as string, { limit: '1' })).json.nextCursor as string;
    expectProblem(await list({ cursor: evCursor }), 400, 'INVALID_CURSOR');
    // Another account's cursor for the same (unfiltered) query.
    const b = await givenAccount();
    const theirWf = await newWorkflow(b, { steps: [{ id: 'x', type: 'set', values: {} }] });
    for (let i = 0; i < 2; i++) expect((await start(b.adminKey.token, theirWf.workflowId, {})).status).toBe(202);
    const foreign = (await listExecs(b.adminKey.token, { limit: '1' })).json.nextCursor as string;
    expectProblem(await list({ cursor: foreign }), 400, 'INVALID_CURSOR');

    for (const [query, path] of [
      [{ status: 'DONE' }, 'status'],
      [{ status: 'pending' }, 'status'],
      [{ trigger: 'cron' }, 'trigger'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
    ] as [Record<string, string>, string][]) {
      const res = await list(query);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(pathsOf(res)).toEqual([path]);
    }
    // A malformed workflow id filters like an unknown one: an empty page (unknown-ids.test.ts).
    expect((await list({ workflowId: 'not-an-id' })).json).toMatchObject({ items: [], nextCursor: null });
  });

  it('result is 409 EXECUTION_NOT_FINISHED while PENDING, and the outcome once finished', async () => {
    expectProblem(await result(a.memberKey.token, r[0] as string), 409, 'EXECUTION_NOT_FINISHED');
    const cancelled = await result(a.memberKey.token, r[1] as string);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toEqual({
      executionId: r[1],
      status: 'CANCELLED',
      output: null,
      variables: expect.objectContaining({ amount: 1 }),
      error: { code: 'CANCELLED', message: expect.any(String) },
    });
    const done = await startRun({
      workflow: await newWorkflow(a, { steps: [{ id: 's', type: 'set', values: { z: 2 } }], output: '{% $vars.z * 21 %}' }),
      trigger: 'api',
      variables: {},
    });
    expect((await runToEnd(a.account.accountId, done.execution.executionId))?.status).toBe('SUCCEEDED');
    const ok = await result(a.memberKey.token, done.execution.executionId);
    expect(ok.json).toEqual({ executionId: done.execution.executionId, status: 'SUCCEEDED', output: 42, variables: { z: 2 }, error: null });
  });

  it('lists the event log oldest first, with paging', async () => {
    const pending = await events(a.memberKey.token, r[0] as string);
    expect(pending.status).toBe(200);
    expect(pending.json.items.map((e: { type: string }) => e.type)).toEqual(['execution.started']);
    expect(pending.json.items[0]).toEqual({
      eventId: expect.stringMatching(/^ev_/),
      type: 'execution.started',
      at: expect.any(Number),
      executionId: r[0],
      seq: 1,
      data: expect.objectContaining({ trigger: 'api', workflowId: wf1.workflowId }),
    });
    expect(pending.json.nextCursor).toBeNull();

    const cancelled = await events(a.memberKey.token, r[1] as string);
    expect(cancelled.json.items.map((e: { type: string }) => e.type)).toEqual(['execution.started', 'execution.cancelled']);
    expect(cancelled.json.items.map((e: { seq: number }) => e.seq)).toEqual([1, 2]);
    const paged = await allPages((cursor) => events(a.memberKey.token, r[1] as string, { limit: '1', ...(cursor ? { cursor } : {}) }), 1);
    expect(paged).toEqual(cancelled.json.items);
    const cursor = (await events(a.memberKey.token, r[1] as string, { limit: '1' })).json.nextCursor as string;
    expectProblem(await events(a.memberKey.token, r[0] as string, { cursor }), 400, 'INVALID_CURSOR');
    expectProblem(await events(a.memberKey.token, r[1] as string, { cursor: 'x.y' }), 400, 'INVALID_CURSOR');
  });

  it('lists no artifacts for a run without any; an unknown artifact is 404', async () => {
    const res = await artifacts(a.memberKey.token, r[0] as string);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [], nextCursor: null });
    expectProblem(await download(a.memberKey.token, r[0] as string, 'ar_01jzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'ARTIFACT_NOT_FOUND');
    expectProblem(
      await download(a.memberKey.token, r[0] as string, 'ar_01jzzzzzzzzzzzzzzzzzzzzzzz', { redirect: '1' }),
      404,
      'ARTIFACT_NOT_FOUND',
    );
  });

  it('lists and downloads a real artifact (JSON link or 302), only under its own execution', async () => {
    const { execution } = await startRun({ workflow: await newWorkflow(a, ARTIFACT), trigger: 'api', variables: {} });
    expect((await runToEnd(a.account.accountId, execution.executionId))?.status).toBe('SUCCEEDED');
    const listed = await artifacts(a.memberKey.token, execution.executionId);
    expect(listed.status).toBe(200);
    expect(listed.json.items).toEqual([
      {
        artifactId: expect.stringMatching(/^ar_/),
        name: 'report "q".json',
        contentType: 'application/json',
        size: 8,
        createdAt: expect.any(Number),
        stepId: 'report',
      },
    ]);
    const artifactId = listed.json.items[0].artifactId as string;

    const link = await download(a.memberKey.token, execution.executionId, artifactId);
    expect(link.status).toBe(200);
    expect(link.json.expiresAt).toBeGreaterThan(Date.now() + 4 * 60_000);
    expect(link.json.expiresAt).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
    const fetched = await fetch(link.json.url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-disposition')).toContain('attachment');
    expect(await fetched.text()).toBe('{"n":42}');

    const redirect = await download(a.memberKey.token, execution.executionId, artifactId, { redirect: '1' });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toMatch(/^https?:\/\//);
    expect(redirect.headers['x-request-id']).toEqual(expect.any(String));
    expect((await download(a.memberKey.token, execution.executionId, artifactId, { redirect: '0' })).status).toBe(200);
    expectProblem(await download(a.memberKey.token, execution.executionId, artifactId, { redirect: 'yes' }), 400, 'VALIDATION_FAILED');

    // The artifact id under another execution of the same account is not found.
    expectProblem(await download(a.memberKey.token, r[0] as string, artifactId), 404, 'ARTIFACT_NOT_FOUND');
    // WORKFLOW_READ is needed.
    const executeOnly = await keyWith(a.member, ['WORKFLOW_EXECUTE']);
    expectProblem(await download(executeOnly, execution.executionId, artifactId), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await artifacts(executeOnly, execution.executionId), 403, 'INSUFFICIENT_SCOPE');
  });

  it('read endpoints need WORKFLOW_READ', async () => {
    const executeOnly = await keyWith(a.member, ['WORKFLOW_EXECUTE']);
    expectProblem(await getExec(executeOnly, r[0] as string), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await listExecs(executeOnly), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await result(executeOnly, r[0] as string), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await events(executeOnly, r[0] as string), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe("another account's execution, and malformed ids", () => {
  let mine: Account;
  let theirs: Account;
  let pending: string;
  let withArtifact: string;
  let artifactId: string;

  beforeAll(async () => {
    [mine, theirs] = await Promise.all([givenAccount(), givenAccount()]);
    await newWorkflow(mine, { steps: [{ id: 'x', type: 'set', values: {} }] });
    const wf = await newWorkflow(theirs, ARTIFACT);
    pending = (await start(theirs.adminKey.token, wf.workflowId, {})).json.executionId;
    withArtifact = (await start(theirs.adminKey.token, wf.workflowId, {})).json.executionId;
    expect((await runToEnd(theirs.account.accountId, withArtifact))?.status).toBe('SUCCEEDED');
    artifactId = (await artifacts(theirs.adminKey.token, withArtifact)).json.items[0].artifactId;
    expect(artifactId).toMatch(/^ar_/);
  });

  it('is 404 on get, result, events, cancel, artifacts and download, and stays untouched', async () => {
    const token = mine.adminKey.token;
    for (const id of [pending, withArtifact]) {
      expectProblem(await getExec(token, id), 404, 'EXECUTION_NOT_FOUND');
      expectProblem(await result(token, id), 404, 'EXECUTION_NOT_FOUND');
      expectProblem(await events(token, id), 404, 'EXECUTION_NOT_FOUND');
      expectProblem(await cancel(token, id, { reason: 'mine now' }), 404, 'EXECUTION_NOT_FOUND');
      expectProblem(await artifacts(token, id), 404, 'EXECUTION_NOT_FOUND');
    }
    const dl = await download(token, withArtifact, artifactId);
    expect(dl.status).toBe(404);
    expect(dl.body).not.toContain('http');
    expect((await download(token, withArtifact, artifactId, { redirect: '1' })).status).toBe(404);
    expect((await listExecs(token)).json.items).toEqual([]);
    expect((await listExecs(token, { workflowId: (await getExec(theirs.adminKey.token, pending)).json.workflowId })).json.items).toEqual(
      [],
    );

    // Untouched for its owner.
    expect((await getExec(theirs.adminKey.token, pending)).json.status).toBe('PENDING');
    expect((await events(theirs.adminKey.token, pending)).json.items).toHaveLength(1);
    expect((await download(theirs.adminKey.token, withArtifact, artifactId)).status).toBe(200);
  });

  it('malformed ids are 404 on every execution endpoint', async () => {
    const token = mine.adminKey.token;
    for (const id of [
      'ex_x',
      '../../etc/passwd',
      'EX#1',
      '',
      ' ',
      `${pending}x`,
      pending.toUpperCase(),
      'ex_01jzzzzzzzzzzzzzzzzzzzzzzz/..',
    ]) {
      for (const res of [
        await getExec(token, id),
        await result(token, id),
        await events(token, id),
        await cancel(token, id),
        await artifacts(token, id),
        await download(token, id, artifactId),
        await download(theirs.adminKey.token, withArtifact, id),
      ]) {
        expect(res.status, JSON.stringify(id)).toBe(404);
        expect(res.headers['content-type']).toBe('application/problem+json');
      }
    }
  });
});

describe('POST /api/v1/executions/{executionId}/cancel', () => {
  let a: Account;
  let wf: Awaited<ReturnType<typeof newWorkflow>>;
  beforeAll(async () => {
    a = await givenAccount();
    wf = await newWorkflow(a, TYPED);
  });

  it('cancels a PENDING run (200 CANCELLED, error.code CANCELLED); a second cancel is 409 EXECUTION_FINISHED', async () => {
    const run = (await start(a.adminKey.token, wf.workflowId, { variables: { amount: 1 } })).json;
    const res = await cancel(a.memberKey.token, run.executionId, { reason: 'not needed' });
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({
      executionId: run.executionId,
      status: 'CANCELLED',
      error: { code: 'CANCELLED', message: expect.stringContaining('not needed') },
      finishedAt: expect.any(Number),
    });
    expect(res.json.steps.map((s: { status: string }) => s.status)).toEqual(['CANCELLED', 'CANCELLED']);
    for (const field of INTERNAL) expect(res.json, field).not.toHaveProperty(field);
    expect((await getExec(a.adminKey.token, run.executionId)).json).toEqual(res.json);

    const again = await cancel(a.adminKey.token, run.executionId);
    expectProblem(again, 409, 'EXECUTION_FINISHED');
    expect((await getExec(a.adminKey.token, run.executionId)).json).toEqual(res.json);
    const types = (await events(a.adminKey.token, run.executionId)).json.items.map((e: { type: string }) => e.type);
    expect(types).toEqual(['execution.started', 'execution.cancelled']);
  });

  it('cancels without a body or reason; refuses a long reason and a key without WORKFLOW_EXECUTE', async () => {
    const run = (await start(a.adminKey.token, wf.workflowId, { variables: { amount: 1 } })).json;
    expectProblem(await cancel(a.adminKey.token, run.executionId, { reason: 'r'.repeat(501) }), 400, 'VALIDATION_FAILED');
    const readOnly = await keyWith(a.member, ['WORKFLOW_READ']);
    expectProblem(await cancel(readOnly, run.executionId), 403, 'INSUFFICIENT_SCOPE');
    expect((await getExec(a.adminKey.token, run.executionId)).json.status).toBe('PENDING');
    const res = await cancel(a.adminKey.token, run.executionId);
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({ status: 'CANCELLED', error: { code: 'CANCELLED' } });

    // A finished (succeeded) run cannot be cancelled either.
    const done = (await start(a.adminKey.token, (await newWorkflow(a, { steps: [{ id: 's', type: 'set', values: {} }] })).workflowId, {}))
      .json;
    expect((await runToEnd(a.account.accountId, done.executionId))?.status).toBe('SUCCEEDED');
    expectProblem(await cancel(a.adminKey.token, done.executionId), 409, 'EXECUTION_FINISHED');
  });
});
