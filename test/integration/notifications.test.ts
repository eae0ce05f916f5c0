import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { handler as notifyHandler } from '../../functions/worker/notify.ts';
import { freePort } from '../../infra/local/emulators.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { queue } from '../../shared/clients.ts';
import { config, resetConfig } from '../../shared/config.ts';
import { listEvents, type RunEvent } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { DELIVERY_TIMEOUT_MS, sendEvent } from '../../shared/notifications/deliver.ts';
import { listExecutionDeliveries } from '../../shared/db/entities/delivery.ts';
import { retryDelaySeconds } from '../../shared/domain/delivery-policy.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { logger } from '../../shared/logger.ts';
import { givenAccount } from '../support/fixtures.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';

// Event notifications (docs/runs-and-events.md "Events"): signed Standard Webhooks POSTs, queued per subscribed event
// and target, retried through the notifications queue with a visibility backoff, never blocking a run.

const SUBSCRIBED = ['execution.started', 'step.succeeded', 'execution.succeeded'] as const;
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const tag = () => randomBytes(4).toString('hex');

// The receiver: records every request. `/flaky/...` answers 500 the first time (per path) and 200
// afterwards; `/redirect/<status>/...?to=<url>` redirects to <url>; everything else answers 200.
type Delivery = { path: string; method: string; headers: Record<string, string>; body: string; status: number };
let receiver: Server;
let base: string;
const deliveries: Delivery[] = [];
const failedOnce = new Set<string>();
const deliveriesTo = (path: string) => deliveries.filter((d) => d.path === path);

const flatHeaders = (req: IncomingMessage) =>
  Object.fromEntries(Object.entries(req.headersDistinct).map(([k, v]) => [k, (v ?? []).join(', ')]));

beforeAll(async () => {
  // A retry unit of 10 s: the first retry comes 10 s after a failure (60 s by default).
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32', DELIVERY_RETRY_SECONDS: '10' });
  receiver = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://receiver');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let status = 200;
      const headers: Record<string, string> = {};
      if (url.pathname.startsWith('/flaky/') && !failedOnce.has(url.pathname)) {
        failedOnce.add(url.pathname);
        status = 500;
      } else if (url.pathname.startsWith('/redirect/')) {
        status = Number(url.pathname.split('/')[2]);
        headers.location = url.searchParams.get('to') ?? '/';
      }
      deliveries.push({
        path: url.pathname,
        method: req.method ?? '',
        headers: flatHeaders(req),
        body: Buffer.concat(chunks).toString('utf8'),
        status,
      });
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
});

type Target = { url: string; events: readonly string[]; secret: string };

/** `savedUnder`: the HTTP_STEP_ALLOWLIST the workflow is saved under (the operator narrowed it since). */
async function givenRun(notifications: Target[], steps: unknown[] = [{ id: 'one', type: 'set', values: { a: 1 } }], savedUnder?: string) {
  const { account, admin } = await givenAccount();
  const allowlist = process.env.HTTP_STEP_ALLOWLIST;
  if (savedUnder !== undefined) process.env.HTTP_STEP_ALLOWLIST = savedUnder;
  resetConfig();
  const workflow = await createWorkflow(
    { accountId: account.accountId, userId: admin.userId, role: 'admin' },
    { name: 'notified', definition: WorkflowDefinition.parse({ steps, notifications }), recovery: false, editors: [] },
  ).finally(() => {
    if (allowlist === undefined) delete process.env.HTTP_STEP_ALLOWLIST;
    else process.env.HTTP_STEP_ALLOWLIST = allowlist;
    resetConfig();
  });
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: admin.userId });
  return { workflow, execution };
}

const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const settled = (e: Pick<Execution, 'accountId' | 'executionId'>) =>
  eventually(
    () => read(e),
    (x) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(x.status),
  );
const eventLog = async (e: Pick<Execution, 'accountId' | 'executionId'>) => (await listEvents(e.accountId, e.executionId, 100)).items;

/** The checks every delivery must pass: a signed Standard Webhooks POST of `event`. */
function expectSignedDelivery(d: Delivery, secret: string, event: RunEvent, workflowId: string) {
  expect(d.method).toBe('POST');
  expect(d.headers['content-type']).toBe('application/json');
  expect(d.headers['webhook-id']).toBe(event.eventId);
  expect(d.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
  expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
  const verified = new Webhook(secret).verify(d.body, d.headers);
  expect(verified).toEqual(JSON.parse(d.body));
  expect(() => new Webhook(newSecret()).verify(d.body, d.headers)).toThrow(WebhookVerificationError);
  // A tampered body no longer verifies either.
  expect(() => new Webhook(secret).verify(d.body.replace(event.type, 'execution.failed'), d.headers)).toThrow(WebhookVerificationError);
  expect(verified).toMatchObject({
    type: event.type,
    timestamp: new Date(event.at).toISOString(),
    data: { executionId: event.executionId, workflowId },
  });
}

const queueDepth = async () => {
  const { Attributes = {} } = await queue().send(
    new GetQueueAttributesCommand({
      QueueUrl: config().NOTIFY_QUEUE_URL,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible);
};

describe('retryDelaySeconds', () => {
  it('waits 1, 4, 15 and 40 units between the 5 attempts (an hour with the default minute); Retry-After wins, up to 12 h', () => {
    // This file's unit is 10 s (DELIVERY_RETRY_SECONDS).
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(n))).toEqual([10, 40, 150, 400]);
    expect([1, 2, 3, 4].reduce((sum, n) => sum + retryDelaySeconds(n), 0)).toBe(60 * 10);
    // Out of range: the nearest step.
    expect([0, -1, 5, 1000].map((n) => retryDelaySeconds(n))).toEqual([10, 10, 400, 400]);
    expect(retryDelaySeconds(1, 3)).toBe(3);
    expect(retryDelaySeconds(4, 0)).toBe(1);
    expect(retryDelaySeconds(2, 10 ** 9)).toBe(12 * 3600);
    expect(retryDelaySeconds(2, Number.NaN)).toBe(40);
  });
});

describe('notifications through the real workers and queues', () => {
  let stop: () => Promise<unknown>;
  let warn: MockInstance;
  /** What the notifications worker logged for failed deliveries. */
  const failures = () =>
    warn.mock.calls
      .filter((c: unknown[]) => c[0] === 'notification delivery failed; will retry')
      .map((c: unknown[]) => c[1] as { eventId: string; receiveCount: number; error: string });
  beforeAll(() => {
    warn = vi.spyOn(logger, 'warn');
    stop = startWorkers();
  });
  afterAll(async () => {
    await stop();
    warn.mockRestore();
  });

  it('delivers exactly the subscribed events as signed Standard Webhooks POSTs', async () => {
    const secret = newSecret();
    const path = `/hook/${tag()}`;
    const { workflow, execution } = await givenRun(
      [{ url: `${base}${path}`, events: SUBSCRIBED, secret }],
      [
        { id: 'one', type: 'set', values: { a: 1 } },
        { id: 'two', type: 'set', values: { b: 2 } },
      ],
    );
    const done = await settled(execution);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    const log = await eventLog(done);
    expect(log.map((e) => e.type)).toEqual([
      'execution.started',
      'step.started',
      'step.succeeded',
      'step.started',
      'step.succeeded',
      'execution.succeeded',
    ]);
    const subscribed = log.filter((e) => (SUBSCRIBED as readonly string[]).includes(e.type));

    await eventually(
      async () => deliveriesTo(path).length,
      (n) => n >= subscribed.length,
    );
    // Nothing else is queued or in flight: every message was delivered and acknowledged.
    await eventually(queueDepth, (n) => n === 0);

    const got = deliveriesTo(path);
    expect(got.map((d) => d.headers['webhook-id']).sort()).toEqual(subscribed.map((e) => e.eventId).sort());
    expect(got.map((d) => JSON.parse(d.body).type).sort()).toEqual([
      'execution.started',
      'execution.succeeded',
      'step.succeeded',
      'step.succeeded',
    ]);
    for (const d of got) {
      const event = subscribed.find((e) => e.eventId === d.headers['webhook-id']) as RunEvent;
      expectSignedDelivery(d, secret, event, workflow.workflowId);
    }
    expect(failures()).toEqual([]);
  });

  it('retries a failed delivery through the queue: same webhook-id, after a backoff', { timeout: 45_000 }, async () => {
    const secret = newSecret();
    const path = `/flaky/${tag()}`;
    const { workflow, execution } = await givenRun([{ url: `${base}${path}`, events: ['execution.started'], secret }]);
    expect((await settled(execution)).status).toBe('SUCCEEDED');
    const [started] = await eventLog(execution);

    // The retry comes after retryDelaySeconds(1) = 10 s of visibility (the queue's own is 30 s).
    const got = await eventually(
      async () => deliveriesTo(path),
      (ds) => ds.length >= 2,
      25_000,
    );
    expect(got.map((d) => d.status)).toEqual([500, 200]);
    for (const d of got) expectSignedDelivery(d, secret, started as RunEvent, workflow.workflowId);
    expect(failures()).toEqual([expect.objectContaining({ eventId: started?.eventId, error: expect.stringContaining('500') })]);
    // Delivered: acknowledged and not sent again.
    await eventually(queueDepth, (n) => n === 0);
    expect(deliveriesTo(path)).toHaveLength(2);
  });

  it('never contacts a target on a forbidden address, directly or through a redirect', async () => {
    let connections = 0;
    const forbidden: TcpServer = createTcpServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => forbidden.listen(0, '127.0.0.2', r));
    try {
      const port = (forbidden.address() as { port: number }).port;
      const events = ['execution.started', 'execution.succeeded'];
      const redirect = `/redirect/307/${tag()}`;
      const allowed = `/hook/${tag()}`;
      // Plain http is only accepted for localhost and 127.0.0.1 in a definition, hence https here; the
      // address check comes before any connection, whatever the scheme. Saved while the operator's
      // allowlist still had 127.0.0.2 (a save refuses a target it can never reach): it has not now.
      const { execution } = await givenRun(
        [
          { url: `https://127.0.0.2:${port}/hook`, events, secret: newSecret() },
          { url: `${base}${redirect}?to=${encodeURIComponent(`http://127.0.0.2:${port}/hook`)}`, events, secret: newSecret() },
          { url: `${base}${allowed}`, events, secret: newSecret() },
        ],
        undefined,
        '127.0.0.1/32,127.0.0.2/32',
      );
      expect((await settled(execution)).status).toBe('SUCCEEDED');
      const log = await eventLog(execution);
      const ids = log.filter((e) => events.includes(e.type)).map((e) => e.eventId);

      // The allowed target got both events; the redirecting one was asked and its redirect refused.
      await eventually(
        async () => [deliveriesTo(allowed).length, deliveriesTo(redirect).length],
        ([a, r]) => a === 2 && (r as number) >= 2,
      );
      // The delivery log: the forbidden target FAILED at once for both events (no retry can fix an
      // address rule); the redirecting one (its 307 not followed) waits for its retry.
      const forbiddenTarget = `https://127.0.0.2:${port}/…`;
      const logged = await eventually(
        async () => (await listExecutionDeliveries(execution.accountId, execution.executionId, 50)).items,
        (ds) =>
          ds.filter((d) => d.target === forbiddenTarget && d.state === 'FAILED').length === 2 &&
          ds.filter((d) => d.attempts[0]?.error?.startsWith('TOO_MANY_REDIRECTS') && d.state === 'PENDING').length === 2,
      );
      for (const d of logged.filter((x) => x.target === forbiddenTarget)) {
        expect(d.attempts).toEqual([expect.objectContaining({ error: expect.stringContaining('TARGET_FORBIDDEN') })]);
        expect(d.nextRetryAt).toBeUndefined();
      }
      expect(
        new Set(
          failures()
            .filter((f) => ids.includes(f.eventId))
            .map((f) => f.eventId),
        ),
      ).toEqual(new Set(ids));
      // Called directly: refused with TARGET_FORBIDDEN, before connecting.
      const started = log[0] as RunEvent;
      expect(
        await sendEvent({ accountId: execution.accountId, executionId: execution.executionId, target: 0, event: started }),
      ).toMatchObject({
        ok: false,
        final: true,
        error: expect.stringContaining('TARGET_FORBIDDEN'),
      });
      expect(connections).toBe(0);
    } finally {
      await new Promise((r) => forbidden.close(r));
    }
  });

  it('never blocks the run on a target that is down or does not answer', { timeout: 40_000 }, async () => {
    const downPort = await freePort(); // nothing listens there: connection refused
    let slowRequests = 0;
    let slowOpen = 0;
    const slow = createServer((req) => {
      slowRequests++;
      req.resume(); // read the body, never answer
    });
    slow.on('connection', (s) => {
      slowOpen++;
      s.on('close', () => slowOpen--);
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const slowUrl = `http://127.0.0.1:${(slow.address() as { port: number }).port}/hook`;
      const good = `/hook/${tag()}`;
      const { execution } = await givenRun(
        [
          { url: `http://127.0.0.1:${downPort}/hook`, events: SUBSCRIBED, secret: newSecret() },
          { url: slowUrl, events: SUBSCRIBED, secret: newSecret() },
          { url: `${base}${good}`, events: SUBSCRIBED, secret: newSecret() },
        ],
        [
          { id: 'one', type: 'set', values: { a: 1 } },
          { id: 'two', type: 'set', values: { b: 2 } },
          { id: 'three', type: 'set', values: { c: 3 } },
        ],
      );
      // The slow target holds a delivery open (until the client gives up after DELIVERY_TIMEOUT_MS)...
      await eventually(
        async () => slowRequests,
        (n) => n >= 1,
      );
      // ...and meanwhile the run goes all the way to SUCCEEDED.
      const done = await settled(execution);
      expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
      expect(slowOpen, `a delivery to the slow target is still waiting (at most ${DELIVERY_TIMEOUT_MS} ms)`).toBeGreaterThan(0);
      const log = await eventLog(done);

      // Take the slow target down too (its open deliveries fail, later ones are refused) so the local
      // poller, which waits for a whole batch, is not held up; the good target still gets every event.
      const closed = new Promise((r) => slow.close(r));
      slow.closeAllConnections();
      await closed;
      const expected = log.filter((e) => (SUBSCRIBED as readonly string[]).includes(e.type)).map((e) => e.eventId);
      await eventually(
        async () => deliveriesTo(good).map((d) => d.headers['webhook-id']),
        (got) => expected.every((id) => got.includes(id)),
      );
      // The target that is down was tried (connection refused), to be retried later.
      await eventually(
        async () => failures().filter((f) => /ECONNREFUSED/.test(f.error)),
        (fs) => fs.some((f) => f.eventId === log[0]?.eventId),
      );
    } finally {
      slow.closeAllConnections();
      if (slow.listening) await new Promise((r) => slow.close(r));
    }
  });
});

// The notifications worker's handler called directly, with SQS-shaped events built from messages
// received from a queue of its own (no poller running), to see the batch response and the backoff.
describe('the notifications worker handler', () => {
  let saved: string | undefined;
  beforeAll(async () => {
    saved = process.env.NOTIFY_QUEUE_URL;
    const { QueueUrl } = await queue().send(
      new CreateQueueCommand({ QueueName: `notify-direct-${tag()}`, Attributes: { VisibilityTimeout: '30' } }),
    );
    process.env.NOTIFY_QUEUE_URL = QueueUrl;
    resetConfig();
  });
  afterAll(() => {
    process.env.NOTIFY_QUEUE_URL = saved;
    resetConfig();
  });

  const receive = async (opts: { WaitTimeSeconds: number; VisibilityTimeout?: number }) =>
    (
      await queue().send(
        new ReceiveMessageCommand({
          QueueUrl: config().NOTIFY_QUEUE_URL,
          MaxNumberOfMessages: 10,
          // local-aws-sqs only reads the older AttributeNames; real SQS takes either.
          MessageSystemAttributeNames: ['All'],
          AttributeNames: ['All'],
          ...opts,
        }),
      )
    ).Messages ?? [];

  const asRecord = (m: Message): SQSRecord => ({
    messageId: m.MessageId as string,
    receiptHandle: m.ReceiptHandle as string,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:notify-direct',
    awsRegion: 'us-east-1',
  });
  const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
  const bodyRecord = (body: string): SQSRecord => ({ ...asRecord({ MessageId: randomUUID(), ReceiptHandle: 'unused', Body: body }) });

  it('reports a failed delivery as a batch item failure and pushes its visibility back by retryDelaySeconds', {
    timeout: 40_000,
  }, async () => {
    const secret = newSecret();
    const path = `/flaky/direct-${tag()}`;
    const { workflow, execution } = await givenRun([{ url: `${base}${path}`, events: ['execution.started'], secret }]);
    const [started] = await eventLog(execution);

    // Received with a 2 s visibility: without the worker's ChangeMessageVisibility it would be back in 2 s.
    const [first] = await eventually(
      () => receive({ WaitTimeSeconds: 1, VisibilityTimeout: 2 }),
      (ms) => ms.length > 0,
    );
    const message = first as Message;
    expect(JSON.parse(message.Body ?? '')).toMatchObject({ executionId: execution.executionId, target: 0, event: started });
    expect(message.Attributes?.ApproximateReceiveCount).toBe('1');

    const failed = await notifyHandler(batch(asRecord(message))).catch((e: unknown) => e);
    expect.soft(failed, 'a failed delivery is reported as a batch item failure, not thrown').toEqual({
      batchItemFailures: [{ itemIdentifier: message.MessageId }],
    });
    expect(deliveriesTo(path).map((d) => d.status)).toEqual([500]);

    // The visibility is now retryDelaySeconds(1) = 10 s: not back after 4 s of long polling...
    expect(retryDelaySeconds(1)).toBe(10);
    expect(await receive({ WaitTimeSeconds: 4 })).toEqual([]);
    // ...but back after the backoff (well before the queue's 30 s).
    const [again] = await eventually(
      () => receive({ WaitTimeSeconds: 1, VisibilityTimeout: 30 }),
      (ms) => ms.length > 0,
      20_000,
    );
    const redelivered = again as Message;
    expect(redelivered.MessageId).toBe(message.MessageId);
    expect(Number(redelivered.Attributes?.ApproximateReceiveCount)).toBeGreaterThanOrEqual(2);

    expect(await notifyHandler(batch(asRecord(redelivered)))).toEqual({ batchItemFailures: [] });
    const got = deliveriesTo(path);
    expect(got.map((d) => d.status)).toEqual([500, 200]);
    for (const d of got) expectSignedDelivery(d, secret, started as RunEvent, workflow.workflowId);
    await queue().send(new DeleteMessageCommand({ QueueUrl: config().NOTIFY_QUEUE_URL, ReceiptHandle: redelivered.ReceiptHandle }));
  });

  it('reports only the failed record of a mixed batch', { timeout: 30_000 }, async () => {
    const flaky = `/flaky/mixed-${tag()}`;
    const fine = `/hook/mixed-${tag()}`;
    const { execution } = await givenRun([
      { url: `${base}${flaky}`, events: ['execution.started'], secret: newSecret() },
      { url: `${base}${fine}`, events: ['execution.started'], secret: newSecret() },
    ]);
    // Both targets' messages, however the receives split them (each receive hides what it took).
    const messages: Message[] = [];
    await eventually(
      async () => messages.push(...(await receive({ WaitTimeSeconds: 1, VisibilityTimeout: 30 }))),
      () => messages.length >= 2,
    );
    expect(messages).toHaveLength(2);
    const byTarget = (t: number) => messages.find((m) => JSON.parse(m.Body ?? '').target === t) as Message;
    const result = await notifyHandler(batch(asRecord(byTarget(0)), asRecord(byTarget(1))));
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: byTarget(0).MessageId }] });
    expect(deliveriesTo(flaky).map((d) => d.status)).toEqual([500]);
    expect(deliveriesTo(fine).map((d) => d.status)).toEqual([200]);
    expect(JSON.parse(byTarget(0).Body ?? '').executionId).toBe(execution.executionId);
    // Clean up (the poller would delete the acknowledged one and leave the failed one to come back).
    for (const m of messages) {
      await queue().send(new DeleteMessageCommand({ QueueUrl: config().NOTIFY_QUEUE_URL, ReceiptHandle: m.ReceiptHandle }));
    }
  });

  it('gets the real receive count from the local poller, so the local backoff grows too', async () => {
    const { QueueUrl } = await queue().send(
      new CreateQueueCommand({ QueueName: `poller-${tag()}`, Attributes: { VisibilityTimeout: '30' } }),
    );
    const counts: string[] = [];
    // A stand-in worker that fails the message once and makes it visible again at once.
    const poller = startPoller(
      QueueUrl as string,
      async (event) => {
        const failed: { itemIdentifier: string }[] = [];
        for (const r of event.Records) {
          counts.push(r.attributes.ApproximateReceiveCount);
          if (counts.length > 1) continue;
          await queue().send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle: r.receiptHandle, VisibilityTimeout: 0 }));
          failed.push({ itemIdentifier: r.messageId });
        }
        return { batchItemFailures: failed };
      },
      { fn: { name: 'stub-notify', timeoutSeconds: 60 } },
    );
    try {
      await queue().send(new SendMessageCommand({ QueueUrl, MessageBody: '{}' }));
      await eventually(
        async () => counts.length,
        (n) => n >= 2,
      );
    } finally {
      await poller.stop();
    }
    expect(counts[0]).toBe('1');
    // Real SQS says 2 here; local-aws-sqs also counts the ChangeMessageVisibility as a receive (3).
    expect(Number(counts[1]), `receive counts seen by the worker: ${counts.join(', ')}`).toBeGreaterThanOrEqual(2);
  });

  it('never counts an event as delivered when a redirect turns its POST into a GET without the payload', async () => {
    const secret = newSecret();
    for (const status of [301, 302, 303]) {
      const dest = `/hook/${tag()}`;
      const { workflow, execution } = await givenRun([
        { url: `${base}/redirect/${status}/${tag()}?to=${encodeURIComponent(`${base}${dest}`)}`, events: ['execution.started'], secret },
      ]);
      const [started] = await eventLog(execution);
      const message = { accountId: execution.accountId, executionId: execution.executionId, target: 0, event: started as RunEvent };
      const sent = await sendEvent(message);
      const outcome = sent.ok ? 'delivered' : `failed (${sent.error})`;
      const arrived = deliveriesTo(dest);
      // Either the redirect is not followed (a failed delivery, retried with backoff) or the event
      // arrives intact, as a signed POST: never as a bodyless GET that is then taken for a delivery.
      expect
        .soft(
          arrived.map((d) => `${d.method} ${d.body.length ? 'with' : 'without'} payload`),
          `${status}: delivery ${outcome}`,
        )
        .toEqual(outcome === 'delivered' ? ['POST with payload'] : []);
      if (outcome === 'delivered' && arrived[0]?.method === 'POST')
        expectSignedDelivery(arrived[0] as Delivery, secret, started as RunEvent, workflow.workflowId);
    }
  });

  it('drops (acknowledges) messages for runs or targets that are gone and messages that do not fit the schema', async () => {
    const gone = {
      accountId: `acc_${tag()}`,
      executionId: `ex_${tag()}`,
      target: 0,
      event: { eventId: `ev_${tag()}`, type: 'execution.started', at: Date.now(), executionId: 'ex_gone', data: {} },
    };
    const records = [bodyRecord(JSON.stringify(gone)), bodyRecord(JSON.stringify({ hello: 'world' }))];
    expect(await notifyHandler(batch(...records))).toEqual({ batchItemFailures: [] });
  });

  it('drops a body that is not JSON instead of retrying it into the DLQ', async () => {
    // A retry cannot fix it (as the runs worker's parseMessage treats it).
    const records = [bodyRecord('not json'), bodyRecord(JSON.stringify({ hello: 'world' }))];
    expect(await notifyHandler(batch(...records)).catch((e: unknown) => e)).toEqual({ batchItemFailures: [] });
  });
});
