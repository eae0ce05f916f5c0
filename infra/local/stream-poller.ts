import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { db, queue } from '../../shared/clients.ts';
import { withPlugins } from '../../shared/sdk-plugins.ts';
import { wait } from './async-invoke.ts';
import { identityOf, outsideInvocations, runAs } from './iam.ts';
import { type FunctionSettings, type Invocation, invoke, lambdaContext } from './lambda.ts';
import { REGION } from './provision.ts';
import { checkPattern, compareSequenceNumbers, lambdaRecord, matchesFilters, type StreamFailureRecord } from './stream-records.ts';

export type { StreamFailureRecord } from './stream-records.ts';

/** An event source mapping's settings, as the CDK stack gives them (functions/audit-stream.ts). */
export type StreamMapping = {
  filter?: Record<string, unknown>;
  batchSize: number;
  bisectBatchOnFunctionError: boolean;
  reportBatchItemFailures: boolean;
  maximumRetryAttempts: number;
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
};

export type StreamPollerOptions = {
  /** The table whose stream (its latest) is read. */
  tableName: string;
  mapping: StreamMapping;
  /** The function as Lambda knows it: its timeout bounds each invocation, its grants its and the mapping's AWS calls. */
  fn: FunctionSettings;
  handler: (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse | undefined>;
  /** The on-failure destination (an SQS queue URL); none: a batch that fails its retries is only logged. */
  onFailureQueueUrl?: string;
  /** Where each shard's checkpoint is kept across restarts (`npm start`'s data folder); none: in memory. */
  checkpointFile?: string;
  /** The wait between GetRecords of an idle shard (Lambda polls each shard 4 times a second). */
  pollMs?: number;
  /** The wait before a failed batch is tried again (AWS does not document its own; about a second here). */
  retryDelayMs?: number;
};

const SHARD_REFRESH_MS = 5_000;

const log = (line: string, e?: unknown) =>
  console.error(`${new Date().toISOString()} local stream: ${line}`, ...(e === undefined ? [] : [e instanceof Error ? e.message : e]));
const seconds = (d: Date | undefined) => (d ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * Stand-in for Lambda's DynamoDB Streams event source mapping, on DynamoDB Local's stream: each shard
 * is read in order (a child shard once its parent is read), every 250 ms while idle; records the
 * filter does not match are dropped before batching; a batch of up to `batchSize` is handed to the
 * function through `invoke` (its timeout, its grants, FAULTS), and the shard waits until it is done:
 * - success: the shard moves past the batch;
 * - batch item failures (with `reportBatchItemFailures`): the batch is retried from the lowest
 *   sequence number reported (an empty, unknown or missing identifier fails the whole batch);
 * - an error or a timeout: with `bisectBatchOnFunctionError` a batch of two or more is split in two
 *   halves, tried one after the other, and the split uses up no retry; a single record is retried;
 * - after `maximumRetryAttempts` retries the batch's description goes to the on-failure queue and the shard moves on.
 * Its own calls (the stream's, the on-failure queue's) are made with the function's role, as Lambda's are.
 */
export async function startStreamPoller(opts: StreamPollerOptions) {
  const { mapping, fn } = opts;
  const filters = mapping.filter ? [mapping.filter] : [];
  for (const f of filters) checkPattern(f);
  const pollMs = opts.pollMs ?? 250;
  const retryDelayMs = opts.retryDelayMs ?? 1_000;
  const role = fn.grants ? identityOf(fn.name, fn.grants) : undefined;
  const asMapping = <T>(work: () => Promise<T>) => (role ? runAs(role, work) : outsideInvocations(work));
  const stopping = new AbortController();
  const latest = await outsideInvocations(() => db().send(new DescribeTableCommand({ TableName: opts.tableName }))).then(
    (d) => d.Table?.LatestStreamArn,
  );
  if (!latest) throw new Error(`the table ${opts.tableName} has no stream`);
  const streamArn: string = latest;
  const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB_STREAMS ?? process.env.AWS_ENDPOINT_URL_DYNAMODB;
  const streams = withPlugins(new DynamoDBStreamsClient({ ...(endpoint && { endpoint }) }));
  const region = process.env.AWS_REGION ?? REGION;
  const functionArn = lambdaContext(fn, '', 0).invokedFunctionArn;

  // Each shard's checkpoint: the last sequence number done with (kept in `checkpointFile` for this stream).
  const saved = opts.checkpointFile && existsSync(opts.checkpointFile) ? JSON.parse(readFileSync(opts.checkpointFile, 'utf8')) : {};
  const checkpoints = new Map<string, string>(saved.streamArn === streamArn ? Object.entries(saved.shards ?? {}) : []);
  const checkpoint = (shardId: string, sequenceNumber: string) => {
    checkpoints.set(shardId, sequenceNumber);
    if (opts.checkpointFile)
      writeFileSync(opts.checkpointFile, JSON.stringify({ streamArn, shards: Object.fromEntries(checkpoints) }, null, 2));
  };

  const iteratorOf = async (shardId: string, after: string | undefined) => {
    const from = after
      ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: after }
      : { ShardIteratorType: mapping.startingPosition };
    const got = await asMapping(() => streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ...from })));
    return got.ShardIterator;
  };

  const eventOf = (batch: _Record[]): DynamoDBStreamEvent => ({ Records: batch.map((r) => lambdaRecord(r, streamArn, region)) });
  const seq = (r: _Record) => r.dynamodb?.SequenceNumber as string;

  /** Where to retry a batch from after an answer: done (undefined), or the index of the first record to try again. */
  function retryFrom(outcome: Invocation<DynamoDBBatchResponse | undefined>, batch: _Record[]): number | undefined {
    if (outcome.status !== 'ok') return 0;
    const reported: unknown = mapping.reportBatchItemFailures ? outcome.result?.batchItemFailures : undefined;
    // Not a list: the answer is malformed, and the whole batch failed.
    const failures = (Array.isArray(reported) ? reported : reported == null ? [] : [null]) as { itemIdentifier?: unknown }[];
    if (failures.length === 0) return undefined;
    const at = failures.map((f) => batch.findIndex((r) => typeof f?.itemIdentifier === 'string' && seq(r) === f.itemIdentifier));
    // An empty, missing or unknown identifier: the whole batch failed.
    if (at.some((i) => i < 0)) return 0;
    return at.reduce((low, i) => (compareSequenceNumbers(seq(batch[i] as _Record), seq(batch[low] as _Record)) < 0 ? i : low));
  }

  async function describeFailure(shardId: string, batch: _Record[], requestId: string, invokes: number, functionError: boolean) {
    const [first, last] = [batch[0] as _Record, batch[batch.length - 1] as _Record];
    const record: StreamFailureRecord = {
      requestContext: { requestId, functionArn, condition: 'RetryAttemptsExhausted', approximateInvokeCount: invokes },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', ...(functionError && { functionError: 'Unhandled' as const }) },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: seq(first),
        endSequenceNumber: seq(last),
        approximateArrivalOfFirstRecord: seconds(first.dynamodb?.ApproximateCreationDateTime),
        approximateArrivalOfLastRecord: seconds(last.dynamodb?.ApproximateCreationDateTime),
        batchSize: batch.length,
        streamArn,
      },
    };
    log(
      `${fn.name}: a batch of ${batch.length} (${seq(first)}…${seq(last)}) failed its retries; its description goes to the on-failure queue`,
    );
    // A destination that cannot be written loses the record, as on AWS.
    if (opts.onFailureQueueUrl) {
      const QueueUrl = opts.onFailureQueueUrl;
      await asMapping(() => queue().send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify(record) }))).catch((e: unknown) =>
        log(`${fn.name}: the failed batch's description could not be sent`, e),
      );
    }
  }

  /** Hands `records` to the function until they are done with (true), or the poller stops first (false: not done). */
  async function deliver(shardId: string, records: _Record[], retries = 0, invokes = 0): Promise<boolean> {
    let batch = records;
    for (;;) {
      const requestId = randomUUID();
      const outcome = await invoke(fn, opts.handler, eventOf(batch), requestId);
      invokes++;
      const from = retryFrom(outcome, batch);
      if (from === undefined) return true;
      const functionError = outcome.status !== 'ok';
      if (functionError && mapping.bisectBatchOnFunctionError && batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        log(`${fn.name}: ${outcome.status === 'timeout' ? 'timed out' : 'failed'} on a batch of ${batch.length}; split in two`);
        return (await deliver(shardId, batch.slice(0, half), retries, invokes)) && deliver(shardId, batch.slice(half), retries, invokes);
      }
      batch = batch.slice(from);
      if (retries >= mapping.maximumRetryAttempts) {
        await describeFailure(shardId, batch, requestId, invokes, functionError);
        return true;
      }
      retries++;
      const why = outcome.status === 'ok' ? 'reported batch item failures' : outcome.status === 'timeout' ? 'timed out' : 'failed';
      log(
        `${fn.name}: ${why}; ${batch.length} record(s) from ${seq(batch[0] as _Record)} retried (retry ${retries} of ${mapping.maximumRetryAttempts})`,
      );
      if (!(await wait(retryDelayMs, stopping.signal))) return false;
    }
  }

  /** Reads one shard to its end (a closed shard) or until the stop, handing its matching records over in order. */
  async function readShard(shardId: string) {
    let position = checkpoints.get(shardId);
    let iterator: string | undefined;
    let buffer: _Record[] = [];
    let started = false;
    while (!stopping.signal.aborted) {
      try {
        if (!started) {
          iterator = await iteratorOf(shardId, position);
          started = true;
        }
        if (iterator && buffer.length < mapping.batchSize) {
          const got = await asMapping(() => streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 })));
          iterator = got.NextShardIterator;
          for (const r of got.Records ?? []) {
            position = seq(r);
            if (matchesFilters(filters, lambdaRecord(r, streamArn, region))) buffer.push(r);
          }
          // Only records the filter dropped: the shard is past them.
          if (buffer.length === 0 && position && position !== checkpoints.get(shardId)) checkpoint(shardId, position);
        }
        if (buffer.length === 0) {
          if (!iterator) return;
          await wait(pollMs, stopping.signal);
          continue;
        }
        const batch = buffer.slice(0, mapping.batchSize);
        if (!(await deliver(shardId, batch))) return;
        buffer = buffer.slice(batch.length);
        checkpoint(shardId, buffer.length === 0 && position ? position : seq(batch[batch.length - 1] as _Record));
      } catch (e) {
        if (stopping.signal.aborted) return;
        const name = (e as Error).name;
        // An iterator unused too long, or records trimmed: read on from the checkpoint (or the shard's start).
        if (name === 'ExpiredIteratorException' || name === 'TrimmedDataAccessException') {
          started = false;
          buffer = [];
          position = name === 'TrimmedDataAccessException' ? undefined : checkpoints.get(shardId);
          continue;
        }
        log(`shard ${shardId}: reading failed; tried again in a second`, e);
        await wait(1_000, stopping.signal);
      }
    }
  }

  // The shards: each read by a loop of its own, a child once its parent is read (or gone).
  const reading = new Map<string, Promise<void>>();
  const finished = new Set<string>();
  let wake: () => void = () => undefined;
  const coordinate = async () => {
    while (!stopping.signal.aborted) {
      try {
        const shards: Shard[] = [];
        let start: string | undefined;
        do {
          const d = await asMapping(() =>
            streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ...(start && { ExclusiveStartShardId: start }) })),
          );
          shards.push(...(d.StreamDescription?.Shards ?? []));
          start = d.StreamDescription?.LastEvaluatedShardId;
        } while (start);
        const known = new Set(shards.map((s) => s.ShardId));
        for (const s of shards) {
          const id = s.ShardId as string;
          if (reading.has(id) || (s.ParentShardId && known.has(s.ParentShardId) && !finished.has(s.ParentShardId))) continue;
          reading.set(
            id,
            readShard(id).then(() => {
              finished.add(id);
              wake();
            }),
          );
        }
      } catch (e) {
        if (!stopping.signal.aborted) log('describing the stream failed', e);
      }
      await Promise.race([wait(SHARD_REFRESH_MS, stopping.signal), new Promise<void>((r) => (wake = r))]);
    }
  };
  const running = coordinate();
  return {
    streamArn,
    /** Stops reading at once; an invocation under way finishes (a retry waiting is dropped: its batch is read again next time). */
    stop: async () => {
      stopping.abort();
      wake();
      await running;
      await Promise.all(reading.values());
      streams.destroy();
    },
  };
}
