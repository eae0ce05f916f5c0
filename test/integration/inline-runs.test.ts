import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { type Execution, executionKey, getExecution } from '../../shared/db/entities/execution.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { readStats } from '../../shared/db/entities/webhook.ts';
import { db, tableName } from '../../shared/clients.ts';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { INLINE_SHARE } from '../../shared/engine/inline.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenKeyHooks } from '../support/key-hooks.ts';
import { instrumentClients, recordCalls } from '../bench/counting.ts';

// Runs that finish in their trigger (docs/runs-and-events.md): a webhook run of steps that change only
// the run is executed by the trigger and written once, ended, with no queue message.

/** A target for http_request steps: answers `{"ok":true}` and remembers what each request found of its run. */
const seen: { path: string; run?: Execution }[] = [];
let seenAccount = '';
const target = createServer((req, res) => {
  const executionId = (req.url ?? '').split('/').pop() ?? '';
  void getExecution(seenAccount, executionId).then((run) => {
    seen.push({ path: req.url ?? '', run });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
let targetUrl = '';

beforeAll(async () => {
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  await instrumentClients();
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  targetUrl = `http://127.0.0.1:${(target.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => target.close(() => r())));

const ONE_SET = {
  variables: { region: { type: 'string', default: 'eu' }, n: { type: 'number', default: 0 } },
  steps: [{ id: 'mark', type: 'set', values: { marked: '{% $vars.region & "-" & $string($vars.n) %}' } }],
};

async function givenHook(definition: object) {
  const { a, key, hook } = await givenKeyHooks();
  const { workflow, webhook, trigger } = await hook(definition);
  const read = async (executionId: string) => (await getExecution(a.account.accountId, executionId)) as Execution;
  const events = async (executionId: string) => (await listEvents(a.account.accountId, executionId, 5_000)).items;
  const usage = async () =>
    Number((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `KEY#${key.id}`, SK: 'KEY' } }))).Item?.usageTotal ?? 0);
  return { a, workflow, webhook, trigger, read, events, usage };
}

/** The run messages queued now for these runs (others of this file's runs may be queued too). */
async function queuedFor(...ids: string[]) {
  const found = [];
  for (let i = 0; i < 3; i++) found.push(...(await takeRunMessages()).filter((m) => ids.includes(m.executionId)));
  return found;
}

describe('a run of steps that change only the run', () => {
  it('is answered as created (PENDING) and read SUCCEEDED, with the events a worker writes, no queue message, and counted once', async () => {
    const h = await givenHook(ONE_SET);
    const answer = await h.trigger({ n: 7 });
    expect(answer.status).toBe('PENDING');
    const e = await h.read(answer.executionId);
    expect(e).toMatchObject({
      status: 'SUCCEEDED',
      variables: { region: 'eu', n: 7, marked: 'eu-7' },
      workflowVersion: h.workflow.version,
      steps: [{ stepId: 'mark', type: 'set', status: 'SUCCEEDED' }],
      output: null,
    });
    expect(e.finishedAt).toBeGreaterThanOrEqual(e.startedAt);
    for (const gone of ['dispatch', 'lease'] as const) expect(e).not.toHaveProperty(gone);
    const events = await h.events(answer.executionId);
    expect(events.map((ev) => [ev.seq, ev.type])).toEqual([
      [1, 'execution.started'],
      [2, 'step.started'],
      [3, 'step.succeeded'],
      [4, 'execution.succeeded'],
    ]);
    expect(events[0]?.data).toMatchObject({ trigger: 'webhook', input: { n: 7 } });
    expect(await queuedFor(answer.executionId)).toEqual([]);
    // Its events are one item, kept as long as the run (a succeeded webhook run's retention).
    const { Items = [] } = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :ev)',
        ExpressionAttributeValues: { ':pk': `ACC#${h.a.account.accountId}#EX#${answer.executionId}`, ':ev': 'EV#' },
      }),
    );
    const { Item: runItem } = await db().send(
      new GetCommand({ TableName: tableName(), Key: executionKey(h.a.account.accountId, answer.executionId) }),
    );
    expect(Items).toHaveLength(1);
    expect(Items[0]?.ttl).toBe(runItem?.ttl);
    expect(Number(runItem?.ttl)).toBeLessThan(Date.now() / 1000 + 31 * 86_400);
    // Not in the active index (nothing for the sweeps), and counted in the webhook's stats and the key's usage.
    expect(runItem).not.toHaveProperty('GSI2PK');
    await flushCounts();
    expect((await readStats(h.webhook.webhookId, Date.now())).accepted).toBe(1);
    expect(await h.usage()).toBe(1);
  });

  it('ends FAILED in its trigger at a fail step, and a switch takes its branch there too', async () => {
    const h = await givenHook({
      variables: { n: { type: 'number', default: 0 } },
      steps: [
        { id: 'route', type: 'switch', cases: [{ when: '{% $vars.n > 5 %}', next: 'stop' }], default: 'ok' },
        { id: 'ok', type: 'set', values: { fine: true }, next: '$end' },
        { id: 'stop', type: 'fail', message: '{% "too many: " & $string($vars.n) %}' },
      ],
    });
    const big = await h.read((await h.trigger({ n: 9 })).executionId);
    expect(big.status).toBe('FAILED');
    expect(big.error?.message).toContain('too many: 9');
    const small = await h.read((await h.trigger({ n: 1 })).executionId);
    expect(small).toMatchObject({ status: 'SUCCEEDED', variables: { fine: true } });
  });

  it('with an Idempotency-Key, a retry answers the first run: one run, counted once', async () => {
    const h = await givenHook(ONE_SET);
    const first = await h.trigger({ n: 1 }, { 'idempotency-key': 'k-1' });
    const again = await h.trigger({ n: 1 }, { 'idempotency-key': 'k-1' });
    expect(again.executionId).toBe(first.executionId);
    expect((await h.read(first.executionId)).status).toBe('SUCCEEDED');
    await flushCounts();
    expect((await readStats(h.webhook.webhookId, Date.now())).accepted).toBe(1);
  });
});

describe('runs that go through the queue as before', () => {
  it('a workflow with an http_request step, or with a notification target, is queued by reference', async () => {
    const request = await givenHook({ steps: [{ id: 'call', type: 'http_request', method: 'GET', url: 'http://127.0.0.1:9/x' }] });
    const notified = await givenHook({
      ...ONE_SET,
      notifications: [{ url: 'https://receiver.example/hook', events: ['execution.failed'], secret: `whsec_${'A'.repeat(32)}` }],
    });
    const ids = [(await request.trigger({})).executionId, (await notified.trigger({})).executionId];
    expect((await request.read(ids[0] as string)).status).toBe('PENDING');
    expect(await notified.read(ids[1] as string)).toMatchObject({ status: 'PENDING', steps: [] });
    expect((await queuedFor(...ids)).map((m) => m.executionId).sort()).toEqual([...ids].sort());
  });

  it('a run that outgrows its share of the trigger is queued with nothing of its progress kept, and the worker runs it once', async () => {
    // The loop and its 1,000 iterations (for_each's most): one step execution more than the share.
    const items = INLINE_SHARE.steps;
    const h = await givenHook({
      steps: [
        {
          id: 'each',
          type: 'for_each',
          items: `{% [1..${items}] %}`,
          steps: [{ id: 'keep', type: 'set', values: { last: '{% $item %}' } }],
        },
      ],
    });
    const { executionId } = await h.trigger({});
    expect(await h.read(executionId)).toMatchObject({ status: 'PENDING', steps: [] });
    expect((await h.events(executionId)).map((ev) => ev.type)).toEqual(['execution.started']);
    const [message] = await queuedFor(executionId);
    expect(message).toBeDefined();
    for (let m = message; m; [m] = await queuedFor(executionId)) await processRunMessage(m, { remainingMs: () => 60_000 });
    const e = await h.read(executionId);
    expect(e).toMatchObject({ status: 'SUCCEEDED', variables: { last: items } });
    const seqs = (await h.events(executionId)).map((ev) => ev.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('inputs the workflow refuses take the queued path, where the worker fails the run', async () => {
    const h = await givenHook(ONE_SET);
    const { executionId } = await h.trigger({ n: 'seven' });
    const [message] = await queuedFor(executionId);
    await processRunMessage(message as never, { remainingMs: () => 60_000 });
    expect(await h.read(executionId)).toMatchObject({ status: 'FAILED', error: { code: 'VALIDATION_FAILED' } });
  });

  it('INLINE_RUNS=off queues every run', async () => {
    const h = await givenHook(ONE_SET);
    process.env.INLINE_RUNS = 'off';
    resetConfig();
    try {
      const { executionId } = await h.trigger({});
      expect((await h.read(executionId)).status).toBe('PENDING');
      expect(await queuedFor(executionId)).toHaveLength(1);
    } finally {
      delete process.env.INLINE_RUNS;
      resetConfig();
    }
  });
});

describe('a run that needs the worker after steps that change only the run', () => {
  const statuses = (e: Execution) => e.steps.map((st) => [st.stepId, st.status]);
  /** set → http_request → switch → set: the shape of most webhook automations. */
  const realistic = () => ({
    variables: { order: { type: 'string', default: '' } },
    steps: [
      { id: 'prepare', type: 'set', values: { path: '{% "/orders/" & $vars.order %}' } },
      {
        id: 'call',
        type: 'http_request',
        method: 'POST',
        url: `{% "${targetUrl}/runs/" & $execution.id %}`,
        body: '{% {"order": $vars.order} %}',
      },
      { id: 'route', type: 'switch', cases: [{ when: '{% $steps.call.body.ok %}', next: 'done' }], default: '$end' },
      { id: 'done', type: 'set', values: { sent: true } },
    ],
  });

  it('is written at its first such step by its trigger, with the steps before it, and the worker goes on from there with no write before the request', async () => {
    const h = await givenHook(realistic());
    seenAccount = h.a.account.accountId;
    const answer = await h.trigger({ order: 'A-1' });
    expect(answer.status).toBe('PENDING');
    // As the worker would have written it before the request: RUNNING at `call`, handed to the message, `prepare` done.
    const handed = await h.read(answer.executionId);
    expect(handed).toMatchObject({
      status: 'RUNNING',
      workflowVersion: h.workflow.version,
      variables: { order: 'A-1', path: '/orders/A-1' },
    });
    expect(statuses(handed)).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['call', 'PENDING'],
      ['route', 'PENDING'],
      ['done', 'PENDING'],
    ]);
    expect(handed.dispatch).toEqual(expect.any(String));
    expect(handed).not.toHaveProperty('lease');
    expect((await h.events(answer.executionId)).map((ev) => [ev.seq, ev.type])).toEqual([
      [1, 'execution.started'],
      [2, 'step.started'],
      [3, 'step.succeeded'],
    ]);
    const [message] = await queuedFor(answer.executionId);
    expect(message?.dispatch).toBe(handed.dispatch);

    const { calls } = await recordCalls(() => processRunMessage(message as never, { remainingMs: () => 60_000 }));
    // The claim, then the request, then the end: nothing is written between the claim and the request.
    const writes = calls.filter((c) => c.service === 'dynamodb' && /Update|Transact|Put|Write/.test(c.command)).map((c) => c.command);
    expect(writes).toEqual(['UpdateItem', 'TransactWriteItems']);
    const during = seen.find((x) => x.path.endsWith(answer.executionId));
    expect(during?.run?.status).toBe('RUNNING');
    expect(during?.run?.lease).toBeDefined();
    expect(statuses(during?.run as Execution).slice(0, 2)).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['call', 'PENDING'],
    ]);

    const e = await h.read(answer.executionId);
    expect(e).toMatchObject({ status: 'SUCCEEDED', variables: { sent: true } });
    expect(statuses(e)).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['call', 'SUCCEEDED'],
      ['route', 'SUCCEEDED'],
      ['done', 'SUCCEEDED'],
    ]);
    const types = (await h.events(answer.executionId)).map((ev) => [ev.seq, ev.type]);
    expect(types).toEqual(types.map(([, type], i) => [i + 1, type]));
    expect(types.at(-1)?.[1]).toBe('execution.succeeded');
    // Its trigger is counted once: by the start, as the worker's claim no longer finds it PENDING.
    await flushCounts();
    expect((await readStats(h.webhook.webhookId, Date.now())).accepted).toBe(1);
    expect(await h.usage()).toBe(1);
  });

  it('with an Idempotency-Key, a retry answers the run handed off and sends its message again (the claim takes one)', async () => {
    const h = await givenHook(realistic());
    seenAccount = h.a.account.accountId;
    const first = await h.trigger({ order: 'B-2' }, { 'idempotency-key': 'handed-1' });
    const again = await h.trigger({ order: 'B-2' }, { 'idempotency-key': 'handed-1' });
    expect(again.executionId).toBe(first.executionId);
    const messages = await queuedFor(first.executionId);
    expect(messages).toHaveLength(2);
    for (const m of messages) await processRunMessage(m, { remainingMs: () => 60_000 });
    expect(await h.read(first.executionId)).toMatchObject({ status: 'SUCCEEDED' });
    expect(seen.filter((x) => x.path.endsWith(first.executionId))).toHaveLength(1);
    await flushCounts();
    expect((await readStats(h.webhook.webhookId, Date.now())).accepted).toBe(1);
  });

  it('an approval after a set step is reached by the worker, which asks for it', async () => {
    const h = await givenHook({
      steps: [
        { id: 'prepare', type: 'set', values: { ready: true } },
        { id: 'approve', type: 'manual_approval', title: 'Ship it?', reviewers: ['role:admin'] },
      ],
    });
    const { executionId } = await h.trigger({});
    const handed = await h.read(executionId);
    expect(handed.status).toBe('RUNNING');
    expect(statuses(handed)).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['approve', 'PENDING'],
    ]);
    const [message] = await queuedFor(executionId);
    await processRunMessage(message as never, { remainingMs: () => 60_000 });
    const waiting = await h.read(executionId);
    expect(waiting.status).toBe('WAITING_APPROVAL');
    expect(statuses(waiting)).toEqual([
      ['prepare', 'SUCCEEDED'],
      ['approve', 'WAITING'],
    ]);
  });
});
