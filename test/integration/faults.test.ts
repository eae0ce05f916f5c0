import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, DeleteQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { handler as healthHandler } from '../../functions/http/health/get.ts';
import { configureFaults, type Faults, faultCounts, parseFaults, SQS_DELAY_MAX_MS, setFaultRandom } from '../../infra/local/faults.ts';
import { identityOf, runAs } from '../../infra/local/iam.ts';
import { invoke as invokeFunction, workerFunction } from '../../infra/local/lambda.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { findRoute, functionOf, startServer } from '../../infra/local/server.ts';
import { grantsOfWorker } from '../../infra/iam.ts';
import { db, queue, storage, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { eventually, takeRunMessages, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { setFlow } from '../bench/flows.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { handler as startRunHandler } from '../../functions/http/v1/workflows/start-run.ts';
import { apiEvent, invoke } from '../support/http.ts';

/**
 * `FAULTS` (infra/local/faults.ts, docs/local-mode.md) on the real emulators: each kind at probability
 * 1 shows its effect on what a function does, and its count on `GET /api/health`; what a test does
 * itself is never faulted; a malformed value is refused.
 */

const run = promisify(execFile);
const WORKER = workerFunction('worker/execute', 60);
const asWorker = <T>(work: () => Promise<T>) => runAs(identityOf(WORKER.name, grantsOfWorker('worker/execute')), work);
const pk = () => `EX#faults-${randomBytes(6).toString('hex')}`;
const item = (PK: string, n = 0) => ({ TableName: tableName(), Item: { PK, SK: `N#${n}`, n } });
const read = (PK: string, n = 0) => db().send(new GetCommand({ TableName: tableName(), Key: { PK, SK: `N#${n}` } }));

/** The attempts the functions' DynamoDB client makes of a call (the SDK's default for DynamoDB). */
const dynamoAttempts = () => (db().config.maxAttempts as () => Promise<number>)();

/** `GET /api/health` through its handler, as its function (its answer checked against the OpenAPI document). */
async function health() {
  const res = await invoke(healthHandler as never, apiEvent({ method: 'GET', path: '/api/health' }));
  expect(res.status).toBe(200);
  return res.json as { status: 'ok'; faults?: Record<string, number> };
}

const inject = (faults: Faults) => configureFaults(faults);

afterEach(() => {
  configureFaults(undefined);
  setFaultRandom(Math.random);
});

describe('FAULTS', () => {
  it('is parsed strictly: an unknown kind, a probability outside 0..1, a kind named twice are refused with what is wrong', () => {
    expect(parseFaults('dynamodb.throttle:0.05,sqs.duplicate:0.2,lambda.crash:0.01')).toEqual({
      'dynamodb.throttle': 0.05,
      'sqs.duplicate': 0.2,
      'lambda.crash': 0.01,
    });
    expect(parseFaults(undefined)).toBeUndefined();
    expect(() => parseFaults('dynamodb.thottle:0.1')).toThrow(/"dynamodb.thottle" is not a fault kind \(the kinds: dynamodb.throttle,/);
    expect(() => parseFaults('sqs.delay:1.5')).toThrow(/1.5 is not a probability from 0 to 1/);
    expect(() => parseFaults('sqs.delay:-0.1')).toThrow(/"-0.1" is not a probability from 0 to 1/);
    expect(() => parseFaults('sqs.delay')).toThrow(/"sqs.delay" is not kind:probability/);
    expect(() => parseFaults('s3.slowdown:1,s3.slowdown:0.5')).toThrow(/s3.slowdown is named twice/);
  });

  it('npm start refuses a malformed FAULTS before it starts anything, and says why', async () => {
    const failed = await run(process.execPath, ['--import', 'tsx', 'infra/local/main.ts'], {
      env: { ...process.env, FAULTS: 'dynamodb.throttle:0.05,lambda.oom:0.1', PORT: '0', DATA_DIR: '/nonexistent/never-made' },
      timeout: 20_000,
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(
      'npm start: FAULTS=dynamodb.throttle:0.05,lambda.oom:0.1 is not valid: "lambda.oom" is not a fault kind',
    );
  });

  it('without FAULTS, /api/health answers no faults', async () => {
    expect(await health()).not.toHaveProperty('faults');
  });
});

describe('the SDK-level kinds, below the SDK retry strategy', () => {
  it('dynamodb.throttle: every attempt of a function call is throttled as DynamoDB throttles; the SDK retries it with its backoff, then throws it', async () => {
    const PK = pk();
    await db().send(new PutCommand(item(PK)));
    inject({ 'dynamodb.throttle': 1 });
    const err = (await asWorker(() => read(PK)).catch((e: unknown) => e)) as Error & {
      $metadata: { attempts: number; totalRetryDelay: number };
    };
    expect(['ProvisionedThroughputExceededException', 'ThrottlingException']).toContain(err.name);
    // The SDK's standard strategy: the client's attempts (DynamoDB's: 4), a throttling backoff (500 ms base) between them.
    expect(err.$metadata.attempts).toBe(await dynamoAttempts());
    expect(err.$metadata.totalRetryDelay).toBeGreaterThan(0);
    // A test's own call is no function's: never faulted.
    expect((await read(PK)).Item).toMatchObject({ n: 0 });
    expect((await health()).faults).toEqual({ 'dynamodb.throttle': err.$metadata.attempts });
  });

  it('dynamodb.throttle at 0.5: a throttled attempt the SDK retries is invisible to the function', async () => {
    const PK = pk();
    let draws = 0;
    // Attempt 1 throttled (0.1 < 0.5, then the error's choice), attempt 2 not (0.9).
    setFaultRandom(() => [0.1, 0.1, 0.9][draws++] ?? 0.9);
    inject({ 'dynamodb.throttle': 0.5 });
    await asWorker(() => db().send(new PutCommand(item(PK))));
    expect((await read(PK)).Item).toMatchObject({ n: 0 });
    expect((await health()).faults).toEqual({ 'dynamodb.throttle': 1 });
  });

  it('a kind that has not happened in its first 1/p chances happens at the next, whatever the draws (a short soak injects every kind)', async () => {
    const PK = pk();
    await db().send(new PutCommand(item(PK)));
    setFaultRandom(() => 0.99);
    inject({ 'dynamodb.error': 0.25 });
    // Chances 1-4 drew no fault; the 5th is one (retried by the SDK, invisible to the function), then draws again.
    for (let n = 0; n < 8; n++) expect((await asWorker(() => read(PK))).Item).toMatchObject({ n: 0 });
    expect((await health()).faults).toEqual({ 'dynamodb.error': 1 });
  });

  it("dynamodb.error: DynamoDB's 500 InternalServerError, retried as transient, then thrown", async () => {
    inject({ 'dynamodb.error': 1 });
    const PK = pk();
    const err = (await asWorker(() => db().send(new PutCommand(item(PK)))).catch((e: unknown) => e)) as Error & {
      $metadata: { attempts: number; httpStatusCode: number };
      $fault: string;
    };
    expect(err.name).toBe('InternalServerError');
    expect(err.$fault).toBe('server');
    expect(err.$metadata).toMatchObject({ attempts: await dynamoAttempts(), httpStatusCode: 500 });
    expect((await read(PK)).Item).toBeUndefined();
    expect((await health()).faults).toEqual({ 'dynamodb.error': err.$metadata.attempts });
  });

  it("s3.slowdown: S3's 503 SlowDown, retried as throttling, then thrown; nothing is stored", async () => {
    inject({ 's3.slowdown': 1 });
    const s3 = await storage();
    const Key = `faults/${randomBytes(6).toString('hex')}`;
    const put = () => s3.send(new PutObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key, Body: 'x' }));
    const err = (await asWorker(put).catch((e: unknown) => e)) as Error & { $metadata: { attempts: number; httpStatusCode: number } };
    expect(err.name).toBe('SlowDown');
    expect(err.$metadata).toMatchObject({ attempts: 3, httpStatusCode: 503 });
    expect((await health()).faults).toEqual({ 's3.slowdown': 3 });
    // The test's own put goes through.
    await put();
  });
});

describe('the Lambda kinds', () => {
  /** A worker whose invocation puts items 0..3 one after the other, then answers. */
  const fourPuts = (PK: string) => async () => {
    for (let n = 0; n < 4; n++) await db().send(new PutCommand(item(PK, n)));
    return 'done';
  };

  it('lambda.crash: the invocation dies before one of its calls; that call and every later one never happen, and the invoker gets Runtime.ExitError', async () => {
    const PK = pk();
    // Crash before call number 2 (0-based): 2/13 of the way to the most calls before a cut.
    setFaultRandom(() => 2 / 13 + 0.001);
    inject({ 'lambda.crash': 1 });
    const outcome = await invokeFunction(WORKER, fourPuts(PK), {});
    expect(outcome).toMatchObject({ status: 'error', error: { name: 'Runtime.ExitError' } });
    const items = await Promise.all([0, 1, 2, 3].map(async (n) => (await read(PK, n)).Item));
    expect(items.map(Boolean)).toEqual([true, true, false, false]);
    expect((await health()).faults).toEqual({ 'lambda.crash': 1 });
  });

  it('lambda.crash after its last call: the work is done, the answer is lost', async () => {
    const PK = pk();
    setFaultRandom(() => 0.99);
    inject({ 'lambda.crash': 1 });
    const outcome = await invokeFunction(WORKER, fourPuts(PK), {});
    expect(outcome).toMatchObject({ status: 'error', error: { name: 'Runtime.ExitError' } });
    expect((await read(PK, 3)).Item).toBeTruthy();
  });

  it('lambda.timeout: the invocation is cut off as at its timeout (at once: the cut is the point), and makes no further call', async () => {
    const PK = pk();
    setFaultRandom(() => 1 / 13 + 0.001);
    inject({ 'lambda.timeout': 1 });
    const started = Date.now();
    const outcome = await invokeFunction(WORKER, fourPuts(PK), {});
    expect(outcome).toEqual({ status: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
    const items = await Promise.all([0, 1, 2, 3].map(async (n) => (await read(PK, n)).Item));
    expect(items.map(Boolean)).toEqual([true, false, false, false]);
    expect((await health()).faults).toEqual({ 'lambda.timeout': 1 });
  });

  it("over HTTP: a crashed route function answers API Gateway's 500; the health route, which reports the faults, is not faulted", async () => {
    const { server, url } = await startServer({ host: '127.0.0.1', port: 0 });
    try {
      inject({ 'lambda.crash': 1, 'lambda.timeout': 1 });
      const res = await fetch(`${url}/api/v1/me`, { headers: { authorization: 'Bearer fg_nope' } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ message: 'Internal Server Error' });
      const h = await fetch(`${url}/api/health`);
      expect(h.status).toBe(200);
      expect(((await h.json()) as { faults: unknown }).faults).toEqual({ 'lambda.crash': 1, 'lambda.timeout': 0 });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('the SQS kinds, at the event source', () => {
  /** A queue of this test's, a poller handing its messages to a worker that records each invocation's message ids. */
  async function polled(faults: Faults, bodies: string[]) {
    const { QueueUrl } = await queue().send(
      new CreateQueueCommand({ QueueName: `faults-${randomBytes(4).toString('hex')}`, Attributes: { VisibilityTimeout: '60' } }),
    );
    const invocations: { at: number; bodies: string[] }[] = [];
    inject(faults);
    const sent = Date.now();
    await queue().send(
      new SendMessageBatchCommand({ QueueUrl, Entries: bodies.map((MessageBody, i) => ({ Id: String(i), MessageBody })) }),
    );
    const poller = startPoller(
      QueueUrl as string,
      async (event: SQSEvent) => {
        invocations.push({ at: Date.now() - sent, bodies: event.Records.map((r) => r.body) });
        return { batchItemFailures: [] };
      },
      { fn: WORKER, batchSize: 10 },
    );
    return {
      invocations,
      stop: async () => {
        await poller.stop();
        await queue().send(new DeleteQueueCommand({ QueueUrl }));
      },
    };
  }

  it('sqs.duplicate: a message is handed to the worker twice', async () => {
    const p = await polled({ 'sqs.duplicate': 1 }, ['only']);
    try {
      await eventually(
        async () => p.invocations.length,
        (n) => n >= 2,
      );
      expect(p.invocations.flatMap((i) => i.bodies)).toEqual(['only', 'only']);
      expect((await health()).faults).toEqual({ 'sqs.duplicate': 1 });
    } finally {
      await p.stop();
    }
  });

  it('sqs.delay: each message comes alone, up to a few seconds late, out of the order it was sent in', async () => {
    // Each message's delay draws in turn: c first, then a, then b.
    const draws = [0, 0.9, 0, 0.5, 0, 0.1];
    let i = 0;
    setFaultRandom(() => draws[i++] ?? 0.99);
    const p = await polled({ 'sqs.delay': 1 }, ['a', 'b', 'c']);
    try {
      await eventually(
        async () => p.invocations.length,
        (n) => n >= 3,
        10_000,
      );
      expect(p.invocations.map((v) => v.bodies)).toEqual([['c'], ['b'], ['a']]);
      expect(p.invocations[0]!.at).toBeGreaterThanOrEqual(500);
      expect(p.invocations[2]!.at).toBeLessThan(SQS_DELAY_MAX_MS + 3_000);
      expect((await health()).faults).toEqual({ 'sqs.delay': 3 });
      expect(faultCounts()).toEqual({ 'sqs.delay': 3 });
    } finally {
      await p.stop();
    }
  });
});

describe('what the faults revealed', () => {
  it('a v1 start cut off between its run and its message: the retry with the same Idempotency-Key sends the message (the run does not stay PENDING)', async () => {
    await useOwnQueues();
    const team = await givenAccount();
    const session = {
      kind: 'session',
      accountId: team.account.accountId,
      userId: team.admin.userId,
      role: 'admin',
      sessionId: '',
    } as const;
    const workflow = await createWorkflow(session, { name: 'cut', definition: setFlow(1), recovery: false, editors: [] });
    const { route } = findRoute('POST', `/api/v1/workflows/${workflow.workflowId}/runs`);
    const start = (key: string) =>
      invokeFunction(
        functionOf(route),
        startRunHandler as never,
        apiEvent({
          method: 'POST',
          path: `/api/v1/workflows/${workflow.workflowId}/runs`,
          params: { workflowId: workflow.workflowId },
          headers: { authorization: `Bearer ${team.adminKey.token}`, 'idempotency-key': key },
          body: { variables: {} },
        }),
      );
    // The invocation crashes before each of its first calls in turn (one of them is the message's send), then the client retries.
    const stuck: string[] = [];
    for (let at = 0; at <= 12; at++) {
      const draws = [0, (at + 0.5) / 13];
      let i = 0;
      setFaultRandom(() => draws[i++] ?? 0.99);
      inject({ 'lambda.crash': 1 });
      const key = `cut-${at}-${randomBytes(4).toString('hex')}`;
      expect((await start(key)).status).toBe('error');
      configureFaults(undefined);
      const retried = await start(key);
      expect(retried.status).toBe('ok');
      const view = JSON.parse((retried as { result: { body: string } }).result.body) as { executionId: string; status: string };
      const queued = (await takeRunMessages()).map((m) => m.executionId);
      if (view.status === 'PENDING' && !queued.includes(view.executionId)) stuck.push(`crash before call ${at}`);
    }
    expect(stuck).toEqual([]);
  });
});
