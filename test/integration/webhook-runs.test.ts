import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { handler as runWorker } from '../../functions/worker/execute.ts';
import { db, queue, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { keyKey } from '../../shared/db/entities/api-key.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, executionKey, getExecution, listExecutions } from '../../shared/db/entities/execution.ts';
import { readStats } from '../../shared/db/entities/webhook.ts';
import { setPlan } from '../../shared/db/entities/account.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { takeAccountBudget } from '../../shared/domain/rate-limit.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow, removeWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { cancelRun } from '../../shared/engine/cancel.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { newId } from '../../shared/ids.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { eventually, takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { identityOf, outsideInvocations, runAs } from '../../infra/local/iam.ts';
import { grantsOfWorker } from '../../infra/iam.ts';

// The trigger's lean path (docs/performance.md): a webhook run starts by reference and takes its
// workflow in the worker; its message goes out beside its record; the trigger counts in the stats and
// the key's usage when the run leaves PENDING, written once per worker batch (`counters.ts`); the
// rate-limit count lives on the account item.

// The queued path of webhook runs (its workflows are `set` steps, which would otherwise finish in
// their trigger: test/integration/inline-runs.test.ts).
beforeAll(() => useOwnQueues({ INLINE_RUNS: 'off' }));

const work = { remainingMs: () => 60_000 };
const run = (m: RunMessage) => processRunMessage(m, work);
/** The run messages now queued, for these runs only (other runs of this file may be queued too). */
async function messagesFor(...ids: string[]) {
  const found: RunMessage[] = [];
  for (let i = 0; i < 10 && found.length < ids.length; i++)
    found.push(...(await takeRunMessages()).filter((m) => ids.includes(m.executionId)));
  expect(found.map((m) => m.executionId).sort()).toEqual([...ids].sort());
  return found;
}

const DEFINITION = {
  variables: { region: { type: 'string', default: 'eu' }, n: { type: 'number', default: 0 } },
  steps: [{ id: 'mark', type: 'set', values: { marked: '{% $vars.region %}' } }],
};

async function givenHook(notifications: unknown[] = []) {
  const a = await givenAccount({ plan: 'enterprise' });
  const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const key = await createKey(actor, { name: 'hook', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const workflow = await createWorkflow(actor, {
    name: 'target',
    definition: WorkflowDefinition.parse({ ...DEFINITION, notifications }),
    recovery: false,
    editors: [],
  });
  const webhook = await createWebhook(actor, CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'hook', apiKeyId: key.id }));
  const trigger = (body: string, contentType = 'application/json', headers: Record<string, string> = {}) =>
    invoke(
      triggerHandler,
      apiEvent({
        method: 'POST',
        path: `/api/webhooks/${webhook.webhookId}/trigger`,
        params: { webhookId: webhook.webhookId },
        headers: { authorization: `Bearer ${key.token}`, 'content-type': contentType, ...headers },
        body,
      }),
    );
  const accepted = async (body: object) => {
    const res = await trigger(JSON.stringify(body));
    expect(res.status, res.body).toBe(200);
    return (await getExecution(a.account.accountId, res.json.executionId)) as Execution;
  };
  const usage = async () => (await db().send(new GetCommand({ TableName: tableName(), Key: keyKey(key.id) }))).Item?.usageTotal ?? 0;
  const stats = () => readStats(webhook.webhookId, Date.now());
  /** The stats item as written so far (no flush first, unlike `readStats`). */
  const stored = async () => {
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `WH#${webhook.webhookId}`, SK: 'STATS' } }));
    return { total: Number(Item?.total ?? 0), accepted: Number(Item?.accepted ?? 0) };
  };
  const runs = async () => (await listExecutions(a.account.accountId, { workflowId: workflow.workflowId }, 100)).items;
  return { a, actor, key, workflow, webhook, trigger, accepted, usage, stats, stored, runs };
}

describe('a webhook run starts by reference', () => {
  it('takes the workflow as it is when the worker picks the run up: definition, defaults, and then the started notification', async () => {
    const target = { url: 'https://receiver.example/hook', events: ['execution.started'], secret: `whsec_${'A'.repeat(32)}` };
    const h = await givenHook([target]);
    const e = await h.accepted({ n: 5 });
    // The trigger wrote the run with the mapped inputs as given, no definition, no steps.
    expect(e).toMatchObject({ status: 'PENDING', variables: { n: 5 }, steps: [], webhookId: h.webhook.webhookId });
    expect(e.workflowVersion).toBeUndefined();
    const [started] = (await listEvents(e.accountId, e.executionId, 10)).items;
    expect(started).toMatchObject({ type: 'execution.started', data: { trigger: 'webhook', input: { n: 5 } } });

    await updateWorkflow(h.actor, h.workflow.workflowId, {
      definition: WorkflowDefinition.parse({
        ...DEFINITION,
        variables: { ...DEFINITION.variables, region: { type: 'string', default: 'us' } },
        notifications: [target],
      }),
    });
    for (const m of await messagesFor(e.executionId)) await run(m);

    const done = (await getExecution(e.accountId, e.executionId)) as Execution;
    expect(done).toMatchObject({ status: 'SUCCEEDED', variables: { n: 5, region: 'us', marked: 'us' } });
    expect(done.workflowVersion).toBe(2);
    expect(done.steps.map((s) => [s.stepId, s.status])).toEqual([['mark', 'SUCCEEDED']]);
    // The started event, written before the run knew its targets, is queued for them now: once.
    const { Messages = [] } = await queue().send(
      new ReceiveMessageCommand({ QueueUrl: config().NOTIFY_QUEUE_URL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const notified = Messages.map((m) => JSON.parse(m.Body ?? '{}')).filter((m) => m.executionId === e.executionId);
    expect(notified).toEqual([{ accountId: e.accountId, executionId: e.executionId, target: 0, event: started }]);
  });

  it('fails the run, not the trigger, on a mapped variable of the wrong type or a workflow deleted meanwhile', async () => {
    const h = await givenHook();
    const wrongType = await h.accepted({ n: 'five' });
    for (const m of await messagesFor(wrongType.executionId)) await run(m);
    const failed = (await getExecution(wrongType.accountId, wrongType.executionId)) as Execution;
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'VALIDATION_FAILED' }, payload: { n: 'five' } });
    expect(failed.error?.message).toContain('variables.n must be a number');
    expect(failed.finishedAt).toEqual(expect.any(Number));
    const events = (await listEvents(failed.accountId, failed.executionId, 10)).items.map((ev) => ev.type);
    expect(events).toEqual(['execution.started', 'execution.failed']);

    const orphan = await h.accepted({ n: 1 });
    await removeWorkflow(h.actor, h.workflow.workflowId);
    for (const m of await messagesFor(orphan.executionId)) await run(m);
    expect(await getExecution(orphan.accountId, orphan.executionId)).toMatchObject({
      status: 'FAILED',
      error: { code: 'WORKFLOW_NOT_FOUND' },
    });
  });
});

describe('counting a trigger', () => {
  it('counts an accepted trigger once, when its run leaves PENDING (claimed or cancelled), and a refusal; each written at the next flush', async () => {
    const h = await givenHook();
    const first = await h.accepted({ n: 1 });
    // Nothing counted on the trigger's own path.
    expect(await h.stored()).toEqual({ total: 0, accepted: 0 });
    expect(await h.usage()).toBe(0);

    const [m] = await messagesFor(first.executionId);
    await run(m as RunMessage);
    // Counted in this instance; written when the worker's batch ends (here: by hand).
    expect(await h.stored()).toEqual({ total: 0, accepted: 0 });
    await flushCounts();
    expect(await h.stored()).toEqual({ total: 1, accepted: 1 });
    expect(await h.usage()).toBe(1);
    // A duplicate delivery of the same message claims nothing and counts nothing.
    await run(m as RunMessage);
    await flushCounts();
    expect(await h.stored()).toEqual({ total: 1, accepted: 1 });
    expect(await h.usage()).toBe(1);

    const second = await h.accepted({ n: 2 });
    await cancelRun(second.accountId, second.executionId, 'not needed');
    await flushCounts();
    expect(await h.stored()).toEqual({ total: 2, accepted: 2 });
    expect(await h.usage()).toBe(2);
    for (const late of await messagesFor(second.executionId)) await run(late);
    await flushCounts();
    expect(await getExecution(second.accountId, second.executionId)).toMatchObject({ status: 'CANCELLED' });
    expect(await h.stored()).toEqual({ total: 2, accepted: 2 });

    // A refusal after the rate limit counts in the stats and in the key's usage (written by the
    // request when the last write is a second old, else by a later one; the stats read writes
    // this instance's counts first).
    expect((await h.trigger('{}', 'text/plain')).status).toBe(415);
    expect(await h.stats()).toMatchObject({ total: 3, accepted: 2, rejected: { '415': 1 } });
    expect(await h.usage()).toBe(3);
    const today = (await h.stats()).daily.at(-1);
    expect(today).toMatchObject({ accepted: 2, rejected: 1 });
  });

  it('counts N runs across several worker batches exactly: one write per counted item at the end of each batch', async () => {
    const h = await givenHook();
    const runs = [];
    for (let i = 0; i < 7; i++) runs.push(await h.accepted({ n: i }));
    const messages = await messagesFor(...runs.map((e) => e.executionId));
    const send = vi.spyOn(db(), 'send');
    const writesTo = (pk: string) => send.mock.calls.filter(([c]) => c instanceof UpdateCommand && c.input.Key?.PK === pk).length;
    try {
      let done = 0;
      for (const size of [3, 3, 1]) {
        const batch = messages.slice(done, done + size);
        const response = await runWorker(
          {
            Records: batch.map((m) => ({ messageId: randomUUID(), body: JSON.stringify(m), attributes: { ApproximateReceiveCount: '1' } })),
          } as never,
          { getRemainingTimeInMillis: () => 30_000 } as never,
        );
        expect(response).toEqual({ batchItemFailures: [] });
        done += size;
        // Written before the batch's invocation returned: the stats and the key's usage, once each.
        expect(await h.stored()).toEqual({ total: done, accepted: done });
        expect(await h.usage()).toBe(done);
      }
      // Three batches: three writes of the stats, three of the key's usage (a fourth for the first use in a UTC day).
      expect(writesTo(`WH#${h.webhook.webhookId}`)).toBe(3);
      expect(writesTo(`KEY#${h.key.id}`)).toBeGreaterThanOrEqual(3);
      expect(writesTo(`KEY#${h.key.id}`)).toBeLessThanOrEqual(4);
    } finally {
      send.mockRestore();
    }
    expect(await h.stats()).toMatchObject({ total: 7, accepted: 7, rejected: {} });
    expect((await h.stats()).daily.at(-1)).toMatchObject({ accepted: 7, rejected: 0 });
    for (const e of runs) expect(await getExecution(e.accountId, e.executionId)).toMatchObject({ status: 'SUCCEEDED' });
  });
});

describe('a run message before its record', () => {
  it('waits for a record that is not there yet, then runs it', async () => {
    const h = await givenHook();
    const e = await h.accepted({ n: 3 });
    const [m] = await messagesFor(e.executionId);
    const key = executionKey(e.accountId, e.executionId);
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key }));
    // As if the message had overtaken the write: the record appears 150 ms after the worker starts.
    await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
    const working = run(m as RunMessage);
    await new Promise((r) => setTimeout(r, 150));
    await db().send(new PutCommand({ TableName: tableName(), Item }));
    await working;
    expect(await getExecution(e.accountId, e.executionId)).toMatchObject({ status: 'SUCCEEDED', variables: { n: 3, region: 'eu' } });
  });

  it('sends the message again while the start may still be writing, and the run goes ahead once it lands', async () => {
    const h = await givenHook();
    const e = await h.accepted({ n: 4 });
    const [m] = (await messagesFor(e.executionId)) as [RunMessage];
    expect(m.sentAt).toEqual(expect.any(Number));
    const key = executionKey(e.accountId, e.executionId);
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key }));
    await db().send(new DeleteCommand({ TableName: tableName(), Key: key }));
    // A write slower than the worker's in-process wait (about a second).
    await run(m);
    await db().send(new PutCommand({ TableName: tableName(), Item }));
    const again = await eventually(
      async () => (await takeRunMessages()).filter((x) => x.executionId === e.executionId),
      (found) => found.length > 0,
      15_000,
    );
    expect(again).toEqual([{ ...m }]);
    await run(again[0] as RunMessage);
    expect(await getExecution(e.accountId, e.executionId)).toMatchObject({ status: 'SUCCEEDED' });
  });

  it('drops the message of a run never written once the start cannot be writing any more, and writes nothing', async () => {
    const { account } = await givenAccount();
    const executionId = newId('ex');
    await run({ accountId: account.accountId, executionId, dispatch: randomUUID(), sentAt: Date.now() - 61_000 });
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: executionKey(account.accountId, executionId) }));
    expect(Item).toBeUndefined();
  });
});

describe('a run whose message cannot be sent', () => {
  /** The next SendMessage fails as it would once the SDK's retries are spent (a fault no emulator makes). */
  const failNextSend = (before?: (command: unknown) => Promise<void>) =>
    vi.spyOn(queue(), 'send').mockImplementationOnce((async (command: unknown) => {
      if (before) await before(command);
      throw Object.assign(new Error('SQS unavailable'), { name: 'ServiceUnavailable' });
    }) as never);
  // Once the failing call is spent, the spy passes calls through to the real client.
  const realSend = (command: unknown) => (queue().send as (c: unknown) => Promise<unknown>)(command);

  it('ends the run FAILED (DISPATCH_FAILED) and answers 503 with Retry-After, so the retry is the one run', async () => {
    const h = await givenHook();
    const spy = failNextSend();
    const res = await h.trigger(JSON.stringify({ n: 1 }));
    spy.mockRestore();
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json).toMatchObject({ code: 'TEMPORARILY_UNAVAILABLE' });
    const [failed] = await h.runs();
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'DISPATCH_FAILED' } });
    expect(failed?.dispatch).toBeUndefined();
    expect((await listEvents(failed?.accountId as string, failed?.executionId as string, 10)).items.map((e) => e.type)).toEqual([
      'execution.started',
      'execution.failed',
    ]);
    const retry = await h.accepted({ n: 1 });
    for (const m of await messagesFor(retry.executionId)) await run(m);
    expect(await getExecution(retry.accountId, retry.executionId)).toMatchObject({ status: 'SUCCEEDED' });
    expect((await h.runs()).map((e) => e.status).sort()).toEqual(['FAILED', 'SUCCEEDED']);
    // The failed start counts nowhere: the caller was answered with an error.
    expect(await h.stats()).toMatchObject({ total: 1, accepted: 1 });
  });

  it('with an Idempotency-Key, frees the key: the retry starts afresh, and later repeats replay it', async () => {
    const h = await givenHook();
    const idem = { 'idempotency-key': `order-${randomUUID()}` };
    const spy = failNextSend();
    expect((await h.trigger(JSON.stringify({ n: 2 }), 'application/json', idem)).status).toBe(503);
    spy.mockRestore();
    const retry = await h.trigger(JSON.stringify({ n: 2 }), 'application/json', idem);
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const again = await h.trigger(JSON.stringify({ n: 2 }), 'application/json', idem);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.executionId).toBe(retry.json.executionId);
    expect((await h.runs()).map((e) => [e.executionId === retry.json.executionId, e.status]).sort()).toEqual([
      [false, 'FAILED'],
      [true, 'PENDING'],
    ]);
    // A replay of a run still PENDING sends its message again (its first try may have died before the
    // send); both copies carry the one dispatch, so the worker runs it once and drops the other.
    const [first, ...rest] = await messagesFor(retry.json.executionId, retry.json.executionId);
    for (const m of rest) expect({ ...m, sentAt: 0 }).toEqual({ ...first, sentAt: 0 });
  });

  it('stands when a worker took the run meanwhile: the send did arrive, only its answer was lost', async () => {
    const h = await givenHook();
    // The worker is another function: it runs as its own, not inside the trigger's invocation.
    const spy = failNextSend(async (command) => {
      await realSend(command);
      await outsideInvocations(async () => {
        for (const m of await takeRunMessages()) await runAs(identityOf('worker-execute', grantsOfWorker('worker/execute')), () => run(m));
      });
    });
    const res = await h.trigger(JSON.stringify({ n: 3 }));
    spy.mockRestore();
    expect(res.status, res.body).toBe(200);
    expect(await getExecution(h.a.account.accountId, res.json.executionId)).toMatchObject({ status: 'SUCCEEDED' });
  });
});

describe('the rate-limit count on the account item', () => {
  const limits = () => config().rateLimits;
  // A window well in the future, so no other request of these accounts falls in it.
  const window0 = (Math.floor(Date.now() / 60_000) + 10) * 60_000;

  it('returns the plan with the count, so a plan change applies to the next request', async () => {
    const { account } = await givenAccount({ plan: 'pro' });
    const before = await takeAccountBudget(account.accountId, window0);
    expect(before.plan).toBe('pro');
    expect(before.headers['x-ratelimit-limit']).toBe(String(limits().pro));
    await setPlan(account.accountId, 'team');
    const after = await takeAccountBudget(account.accountId, window0 + 1_000);
    expect(after.plan).toBe('team');
    expect(after.headers['x-ratelimit-limit']).toBe(String(limits().team));
    expect(after.headers['x-ratelimit-remaining']).toBe(String(limits().team - 2));
  });

  it('starts each window afresh, and a request whose clock is behind counts in the newer window', async () => {
    const { account } = await givenAccount({ plan: 'enterprise' });
    const limit = limits().enterprise;
    const take = async (now: number) => (await takeAccountBudget(account.accountId, now)).headers;
    for (let i = 1; i <= 3; i++) expect((await take(window0 + i))['x-ratelimit-remaining']).toBe(String(limit - i));
    const next = await take(window0 + 60_000);
    expect(next['x-ratelimit-remaining']).toBe(String(limit - 1));
    expect(next['x-ratelimit-reset']).toBe(String(window0 / 1000 + 120));
    const behind = await take(window0 + 59_000);
    expect(behind['x-ratelimit-remaining']).toBe(String(limit - 2));
    expect(behind['x-ratelimit-reset']).toBe(String(window0 / 1000 + 120));
  });

  it('answers 404 ACCOUNT_NOT_FOUND for an account that does not exist, and creates nothing', async () => {
    const accountId = newId('acc');
    await expect(takeAccountBudget(accountId, window0)).rejects.toMatchObject({ kind: 'not_found', code: 'ACCOUNT_NOT_FOUND' });
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `ACC#${accountId}`, SK: 'ACCOUNT' } }));
    expect(Item).toBeUndefined();
  });
});
