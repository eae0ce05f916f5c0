import type { ChildProcess } from 'node:child_process';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  ARTIFACTS_BUCKET,
  ASYNC_FAILURES_QUEUE,
  AUDIT_EVENTS_DLQ,
  createTableInput,
  HEAVY_RUNS_QUEUE,
  NOTIFY_QUEUE,
  RUNS_QUEUE,
  TABLE,
} from '../../shared/db/table.ts';

/** Credentials the emulators accept (s3rver checks for these). */
export const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const REGION = 'us-east-1';
const TABLE_NAME = 'flowgate';

/**
 * Once DynamoDB Local answers, the table (with its TTL and its stream), the queues (the runs queue's two
 * lanes, the notifications queue) with their DLQs, the
 * asynchronous invocations' and the audit stream's on-failure queues (infra/local/async-invoke.ts,
 * infra/local/stream-poller.ts) and the bucket, from the same definitions the CDK stack uses; what
 * exists already (a data folder) is kept, and a table from before the stream gets it. `stream: false`
 * (the tests' and the bench's emulators, where no stream poller reads it) leaves the stream out.
 */
export async function provision(
  endpoints: { dynamodb: string; sqs: string; s3: string },
  java: ChildProcess,
  { stream = true }: { stream?: boolean } = {},
) {
  const common = { region: REGION, credentials: CREDENTIALS };
  const ddb = new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb, maxAttempts: 1 });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (java.exitCode !== null) throw new Error('DynamoDB Local exited; is Java 17+ installed?');
    try {
      await ddb.send(new ListTablesCommand({}));
      break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const existing = await ddb.send(new DescribeTableCommand({ TableName: TABLE_NAME })).then(
    (d) => d.Table,
    () => undefined,
  );
  if (existing && stream && !existing.LatestStreamArn)
    await ddb.send(
      new UpdateTableCommand({ TableName: TABLE_NAME, StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.stream } }),
    );
  if (!existing) {
    await ddb.send(new CreateTableCommand(createTableInput(TABLE_NAME, { stream })));
    await ddb.send(
      new UpdateTimeToLiveCommand({ TableName: TABLE_NAME, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
    );
  }
  const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
  const createQueue = async (q: typeof RUNS_QUEUE | typeof HEAVY_RUNS_QUEUE | typeof NOTIFY_QUEUE) => {
    await sqs.send(new CreateQueueCommand({ QueueName: q.dlqName }));
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: q.name,
        Attributes: {
          VisibilityTimeout: String(q.visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: `arn:aws:sqs:${REGION}:123456789012:${q.dlqName}`,
            maxReceiveCount: q.maxReceiveCount,
          }),
        },
      }),
    );
    return QueueUrl as string;
  };
  const queueUrl = await createQueue(RUNS_QUEUE);
  const heavyQueueUrl = await createQueue(HEAVY_RUNS_QUEUE);
  const notifyQueueUrl = await createQueue(NOTIFY_QUEUE);
  const { QueueUrl: asyncFailuresQueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: ASYNC_FAILURES_QUEUE.name,
      Attributes: { MessageRetentionPeriod: String(ASYNC_FAILURES_QUEUE.retentionDays * 24 * 3600) },
    }),
  );
  const { QueueUrl: auditEventsDlqUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: AUDIT_EVENTS_DLQ.name,
      Attributes: { MessageRetentionPeriod: String(AUDIT_EVENTS_DLQ.retentionDays * 24 * 3600) },
    }),
  );
  const s3 = new S3Client({ ...common, endpoint: endpoints.s3, forcePathStyle: true });
  const hasBucket = await s3.send(new HeadBucketCommand({ Bucket: ARTIFACTS_BUCKET.name })).then(
    () => true,
    () => false,
  );
  if (!hasBucket) await s3.send(new CreateBucketCommand({ Bucket: ARTIFACTS_BUCKET.name }));
  for (const c of [ddb, sqs, s3]) c.destroy();
  return {
    table: TABLE_NAME,
    queueUrl,
    heavyQueueUrl,
    notifyQueueUrl,
    asyncFailuresQueueUrl: asyncFailuresQueueUrl as string,
    auditEventsDlqUrl: auditEventsDlqUrl as string,
    bucket: ARTIFACTS_BUCKET.name,
  };
}
