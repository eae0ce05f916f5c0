import { randomBytes } from 'node:crypto';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS_MAPPING, AUDIT_EVENTS_TIMEOUT_SECONDS } from '../../functions/audit-stream.ts';
import { handler as auditList } from '../../functions/http/audit/list.ts';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as createKey } from '../../functions/http/keys/create.ts';
import { type FunctionSettings, workerFunction } from '../../infra/local/lambda.ts';
import { type StreamFailureRecord, type StreamMapping, startStreamPoller } from '../../infra/local/stream-poller.ts';
import { db, queue } from '../../shared/clients.ts';
import { eventually, useOwnTable } from '../support/engine.ts';
import { startEventBridgeListener } from '../support/eventbridge-listener.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { freshIp } from '../support/sessions.ts';

// The table's stream to the audit-events worker, as AWS's event source mapping runs it, on DynamoDB
// Local's real stream (infra/local/stream-poller.ts), with the mapping's own settings
// (functions/audit-stream.ts), the worker's grants, a real local SQS queue as its on-failure
// destination and a PutEvents endpoint that answers as EventBridge does.

const listener = await startEventBridgeListener();
process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = listener.url;
const { handler: auditEvents } = await import('../../functions/worker/audit-events.ts');
afterAll(() => listener.close());

const WORKER = workerFunction('worker/audit-events', AUDIT_EVENTS_TIMEOUT_SECONDS);
type Handler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;
let stops: (() => Promise<unknown>)[] = [];
let dlqUrl = '';
/** Every event the function was invoked with, by the test's spy around it. */
let invocations: DynamoDBRecord[][] = [];

beforeEach(async () => {
  listener.reset();
  invocations = [];
  // A table with the CDK table's stream, and an on-failure queue, of this test's own.
  await useOwnTable({ stream: true });
  const { QueueUrl } = await queue().send(new CreateQueueCommand({ QueueName: `audit-events-dlq-${randomBytes(4).toString('hex')}` }));
  dlqUrl = QueueUrl as string;
  // The worker's role names its DLQ (infra/local/iam.ts localArns), as the stack's does.
  process.env.AUDIT_EVENTS_DLQ_URL = dlqUrl;
});
afterEach(async () => {
  await Promise.all(stops.map((s) => s()));
  stops = [];
});

/** The stream poller on this test's table: the mapping's settings unless `mapping` says otherwise. */
async function startMapping(opts: { handler?: Handler; fn?: FunctionSettings; mapping?: Partial<StreamMapping> } = {}) {
  const handler = opts.handler ?? auditEvents;
  const poller = await startStreamPoller({
    tableName: process.env.TABLE_NAME as string,
    mapping: { ...AUDIT_EVENTS_MAPPING, ...opts.mapping },
    fn: opts.fn ?? WORKER,
    handler: async (event, context) => {
      invocations.push(event.Records);
      return (handler as (e: DynamoDBStreamEvent, c: unknown) => Promise<DynamoDBBatchResponse | undefined>)(event, context);
    },
    onFailureQueueUrl: dlqUrl,
    pollMs: 100,
    retryDelayMs: 0,
  });
  stops.push(poller.stop);
  return poller;
}

/** The on-failure queue's messages (it is this test's: nothing else reads it). */
async function dlqMessages(): Promise<StreamFailureRecord[]> {
  const out: StreamFailureRecord[] = [];
  for (;;) {
    const { Messages = [] } = await queue().send(
      new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 300 }),
    );
    if (Messages.length === 0) return out;
    out.push(...Messages.map((m) => JSON.parse(m.Body as string)));
  }
}

const details = () => listener.entries().map((e) => JSON.parse(e.Detail as string) as { auditId: string; action: string; object: any });
const putDetails = () => {
  // The entries EventBridge accepted (a refused one is sent again, and counted once it is accepted).
  const accepted: ReturnType<typeof details> = [];
  for (const r of listener.requests)
    for (const e of r.entries) if (!listener.state.refuse(e)) accepted.push(JSON.parse(e.Detail as string));
  return accepted;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seqOf = (r: DynamoDBRecord) => r.dynamodb?.SequenceNumber as string;

/** A signed-in admin of a fresh account, and a route call that writes one audit entry (`key.created`, named `name`). */
async function adminOf() {
  const a = await givenAccount();
  const ip = freshIp();
  const session = await invoke(
    login,
    apiEvent({ method: 'POST', path: '/api/auth/login', body: { email: a.admin.email, password: PASSWORD }, sourceIp: ip }),
  );
  expect(session.status).toBe(200);
  const token = session.json.token as string;
  const keyNamed = async (name: string) => {
    const res = await invoke(
      createKey,
      apiEvent({
        method: 'POST',
        path: '/api/keys',
        headers: bearer(token),
        sourceIp: ip,
        body: { name, scopes: ['WORKFLOW_READ'], validityDays: 7 },
      }),
    );
    expect(res.status, res.body).toBe(201);
    return res.json.id as string;
  };
  const auditLog = async () => {
    const res = await invoke(auditList, apiEvent({ path: '/api/audit', headers: bearer(token), query: { limit: '100' } }));
    expect(res.status, res.body).toBe(200);
    return res.json.items as { auditId: string; action: string }[];
  };
  return { a, keyNamed, auditLog };
}

describe('the audit stream, as Lambda maps it to the worker', () => {
  it('puts each audit entry written through a route on the bus once, in the order written, as the API reads it; no other record reaches the worker', async () => {
    await startMapping();
    const admin = await adminOf();
    // Twelve entries: more than one batch of 10.
    const keys: string[] = [];
    for (let i = 0; i < 12; i++) keys.push(await admin.keyNamed(`key ${i}`));
    const log = await admin.auditLog();
    const ours = () => details().filter((d) => d.action === 'key.created' && keys.includes(d.object.id));
    await eventually(
      async () => ours(),
      (d) => d.length >= keys.length,
    );
    await sleep(1_000);
    expect(ours().map((d) => d.object.id)).toEqual(keys);
    // Every entry of the account's log, each once, and as the API answers it.
    const put = details();
    expect(put.map((d) => d.auditId).sort()).toEqual(log.map((e) => e.auditId).sort());
    for (const entry of log) expect(put.find((d) => d.auditId === entry.auditId)).toEqual(entry);
    // The account, its members and keys, the sessions and counters were written too: only audit INSERTs were handed over.
    expect(invocations.length).toBeGreaterThan(0);
    for (const r of invocations.flat()) {
      expect(r.eventName).toBe('INSERT');
      expect(r.dynamodb?.NewImage?.type?.S).toBe('audit');
      expect(r.dynamodb?.NewImage?.PK?.S).toMatch(/^AUDIT#/);
      expect(r.eventSource).toBe('aws:dynamodb');
    }
    const { Table } = await db().send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }));
    expect(invocations[0]?.[0]?.eventSourceARN).toBe(Table?.LatestStreamArn);
    // In the stream's order, each at most 10 a batch.
    const seqs = invocations.flat().map(seqOf);
    expect(seqs).toEqual([...seqs].sort((x, y) => (BigInt(x) < BigInt(y) ? -1 : 1)));
    expect(Math.max(...invocations.map((b) => b.length))).toBeLessThanOrEqual(10);
  });

  it('retries a batch from the entry PutEvents keeps refusing, 10 times, then describes it on the DLQ; the entries before it are put once and the shard moves on', async () => {
    listener.state.refuse = (e) => (JSON.parse(e.Detail as string).object?.name === 'doomed' ? 'InternalFailure' : undefined);
    const admin = await adminOf();
    const before = await admin.keyNamed('before');
    const doomed = await admin.keyNamed('doomed');
    const after = await admin.keyNamed('after');
    // Written before the mapping starts (TRIM_HORIZON): one batch holds them all.
    await startMapping();
    const [failure] = await eventually(dlqMessages, (m) => m.length > 0);
    const batches = invocations.map((b) => b.map((r) => r.dynamodb?.NewImage?.object?.M?.id?.S ?? r.dynamodb?.NewImage?.action?.S));
    // The first try had them all (the account's first entries, then these three); each of the 10 retries
    // starts at the refused entry (the lowest failed sequence number).
    const first = batches[0] ?? [];
    expect(first.slice(-3)).toEqual([before, doomed, after]);
    expect(batches.slice(1)).toEqual(Array.from({ length: 10 }, () => [doomed, after]));
    const doomedRecord = invocations[0]?.at(-2) as DynamoDBRecord;
    const afterRecord = invocations[0]?.at(-1) as DynamoDBRecord;
    const { Table } = await db().send(new DescribeTableCommand({ TableName: process.env.TABLE_NAME }));
    expect(failure).toMatchObject({
      version: '1.0',
      requestContext: {
        functionArn: expect.stringMatching(/:function:worker-audit-events$/),
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: 11,
      },
      // The function answered (batch item failures): no function error.
      responseContext: { statusCode: 200, executedVersion: '$LATEST' },
      DDBStreamBatchInfo: {
        shardId: expect.stringMatching(/^shardId-/),
        startSequenceNumber: seqOf(doomedRecord),
        endSequenceNumber: seqOf(afterRecord),
        batchSize: 2,
        streamArn: Table?.LatestStreamArn,
        approximateArrivalOfFirstRecord: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      },
    });
    expect(failure?.responseContext).not.toHaveProperty('functionError');
    const put = putDetails().map((d) => d.object.id ?? d.action);
    for (const id of first.slice(0, -2)) expect(put.filter((x) => x === id)).toHaveLength(1);
    expect(put).not.toContain(doomed);
    // At least once: the entry after the refused one went with each retry.
    expect(put.filter((id) => id === after)).toHaveLength(11);
    // The shard goes on past the failed batch.
    const next = await admin.keyNamed('next');
    await eventually(
      async () => putDetails().filter((d) => d.object.id === next),
      (d) => d.length === 1,
    );
    expect(await dlqMessages()).toEqual([]);
  });

  it('splits a batch whose invocation fails in halves, without using up retries, until the failing record is alone; the others go in order', async () => {
    const accountId = `acc_${randomBytes(4).toString('hex')}`;
    // Ten audit entries, written before the mapping starts: one batch of 10.
    for (let n = 0; n < 10; n++)
      await db().send(
        new PutCommand({
          TableName: process.env.TABLE_NAME,
          Item: { PK: `AUDIT#${accountId}#0`, SK: `2026-01-01T00:00:0${n}.000Z#ae_${n}`, type: 'audit', auditId: `ae_${n}`, n },
        }),
      );
    const done: number[] = [];
    const nOf = (r: DynamoDBRecord) => Number(r.dynamodb?.NewImage?.n?.N);
    await startMapping({
      fn: { name: 'poisoned', timeoutSeconds: 5 },
      handler: async (event) => {
        const ns = event.Records.map(nOf);
        if (ns.includes(6)) throw new Error('poisoned by 6');
        done.push(...ns);
        return { batchItemFailures: [] };
      },
    });
    const [failure] = await eventually(dlqMessages, (m) => m.length > 0);
    await eventually(
      async () => done,
      (d) => d.length === 9,
    );
    expect(invocations.map((b) => b.map(nOf))).toEqual([
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
      [5, 6, 7],
      [5, 6],
      [5],
      // Alone, it has its 10 retries (no split used any).
      ...Array.from({ length: 11 }, () => [6]),
      [7],
      [8, 9],
    ]);
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 7, 8, 9]);
    const six = invocations[0]?.[6] as DynamoDBRecord;
    expect(failure?.DDBStreamBatchInfo).toMatchObject({ startSequenceNumber: seqOf(six), endSequenceNumber: seqOf(six), batchSize: 1 });
    expect(failure?.responseContext).toEqual({ statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' });
  });

  it('takes an answer that names no record of the batch, or is not a list, as the whole batch failed: retried whole, retries counted', async () => {
    await adminOf();
    const answers: unknown[] = [{ batchItemFailures: [{ itemIdentifier: '' }] }, { batchItemFailures: { itemIdentifier: 'x' } }];
    await startMapping({
      fn: { name: 'odd-answers', timeoutSeconds: 5 },
      mapping: { maximumRetryAttempts: 1 },
      handler: async () => (answers.shift() ?? { batchItemFailures: [] }) as DynamoDBBatchResponse,
    });
    const [failure] = await eventually(dlqMessages, (m) => m.length > 0);
    const first = invocations[0]?.map(seqOf) ?? [];
    expect(first.length).toBeGreaterThan(0);
    expect(invocations.map((b) => b.map(seqOf))).toEqual([first, first]);
    expect(failure?.DDBStreamBatchInfo).toMatchObject({ startSequenceNumber: first[0], batchSize: first.length });
  });

  it('treats an invocation past its timeout as failed: retried, then described on the DLQ', async () => {
    await adminOf();
    // Not bisected here: the whole batch, tried twice.
    await startMapping({
      fn: { name: 'slow', timeoutSeconds: 1 },
      mapping: { maximumRetryAttempts: 1, bisectBatchOnFunctionError: false },
      handler: () => new Promise(() => undefined),
    });
    const [failure] = await eventually(dlqMessages, (m) => m.length > 0);
    const size = invocations[0]?.length ?? 0;
    expect(size).toBeGreaterThan(0);
    expect(invocations.map((b) => b.length)).toEqual([size, size]);
    expect(failure).toMatchObject({
      requestContext: { approximateInvokeCount: 2 },
      responseContext: { functionError: 'Unhandled' },
      DDBStreamBatchInfo: { batchSize: size, startSequenceNumber: seqOf(invocations[0]?.[0] as DynamoDBRecord) },
    });
  });

  it("reads the stream, puts events and writes the DLQ with the worker's grants only", async () => {
    await adminOf();
    // Without events:put, PutEvents is refused (AccessDeniedException): the entry never reaches the bus, its batch ends on the DLQ.
    await startMapping({ fn: { ...WORKER, grants: ['stream:read'] }, mapping: { maximumRetryAttempts: 0 } });
    const [failure] = await eventually(dlqMessages, (m) => m.length > 0);
    expect(failure?.DDBStreamBatchInfo.batchSize).toBe(invocations[0]?.length);
    expect(listener.requests).toEqual([]);
    await Promise.all(stops.map((s) => s()));
    stops = [];
    // Without stream:read, the mapping reads nothing: the worker is never invoked.
    invocations = [];
    await startMapping({ fn: { ...WORKER, grants: ['events:put'] } });
    await sleep(1_500);
    expect(invocations).toEqual([]);
  });
});
