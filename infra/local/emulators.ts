import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { type NodeEmulator, spawnDynamoDb, startNodeEmulator } from './emulator-spawn.ts';
import { dynamoDbFolder, type EmulatorPids, killStale, readState, type State, saveToDisk, writeState } from './emulator-state.ts';
import { CREDENTIALS, provision, REGION } from './provision.ts';

export type Emulators = {
  /** Environment that points the production SDK clients (and config) at the emulators. */
  env: Record<string, string>;
  /** Their processes: DynamoDB Local's JVM and the SQS and S3 emulators' Node processes. */
  pids: EmulatorPids;
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
 * Start DynamoDB Local (AWS's own emulator, on Java), local-aws-sqs, s3rver and aws-ses-v2-local, each in a process of
 * its own, and create the table, queues and bucket from the same definitions the CDK stack uses.
 * With `dataDir`, DynamoDB and S3 keep their data there (DynamoDB's working copy on tmpfs where
 * there is one: see `dynamoDbFolder`) and the endpoints and pids are written to
 * `<dataDir>/emulators.json` for the operator CLI and the bench; without it everything is in memory
 * (tests, bench). With `stream` the table has the CDK table's stream (`npm start`: its audit stream
 * reads it); without, none (the tests and the bench, which read no stream: DynamoDB Local spends about a
 * third more CPU on each write it records in one).
 */
export async function startEmulators(opts: { dataDir?: string; stream?: boolean } = {}): Promise<Emulators> {
  const { dataDir } = opts;
  let previous: State | undefined;
  if (dataDir) {
    mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
    mkdirSync(join(dataDir, 's3'), { recursive: true });
    previous = readState(dataDir);
    if (previous) await killStale(previous);
  }
  const folder = dataDir ? dynamoDbFolder(dataDir, previous) : undefined;
  // The tmpfs copy is recorded before DynamoDB Local writes to it, so a crash from here on keeps it.
  if (dataDir && folder?.tmpfs)
    writeState(dataDir, { ...(previous ?? { env: {}, pids: { dynamodb: 0, sqs: 0, s3: 0, ses: 0 }, javaPid: 0 }), tmpfs: folder.tmpfs });
  const s3Dir = dataDir ? join(dataDir, 's3') : join(process.env.TMPDIR ?? '/tmp', `flowgate-s3-${process.pid}-${Date.now()}`);
  const ddbPort = await freePort();
  const java = spawnDynamoDb(ddbPort, folder?.dir);
  const children: ChildProcess[] = [java];
  const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r)));
  const stop = async () => {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map(exited));
    if (dataDir && folder?.tmpfs) saveToDisk(dataDir, folder.tmpfs.dir);
    if (!dataDir) rmSync(s3Dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled([startNodeEmulator('sqs'), startNodeEmulator('s3', s3Dir), startNodeEmulator('ses')]);
    for (const s of started) if (s.status === 'fulfilled') children.push(s.value.child);
    const [sqs, s3, ses] = started.map((s) => {
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    }) as [NodeEmulator, NodeEmulator, NodeEmulator];
    const endpoints = {
      dynamodb: `http://127.0.0.1:${ddbPort}`,
      sqs: `http://127.0.0.1:${sqs.port}`,
      s3: `http://127.0.0.1:${s3.port}`,
      ses: `http://127.0.0.1:${ses.port}`,
    };
    const names = await provision(endpoints, java, { stream: opts.stream ?? false });
    const env = {
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      // Approval mail goes to aws-ses-v2-local through the production SES v2 client.
      AWS_ENDPOINT_URL_SESV2: endpoints.ses,
      S3_FORCE_PATH_STYLE: 'true',
      TABLE_NAME: names.table,
      RUNS_QUEUE_URL: names.queueUrl,
      HEAVY_RUNS_QUEUE_URL: names.heavyQueueUrl,
      NOTIFY_QUEUE_URL: names.notifyQueueUrl,
      // Lambda's on-failure destination of the asynchronous invocations (infra/local/async-invoke.ts); no function reads it.
      ASYNC_FAILURES_QUEUE_URL: names.asyncFailuresQueueUrl,
      // The audit stream's on-failure destination (infra/local/stream-poller.ts); no function reads it.
      AUDIT_EVENTS_DLQ_URL: names.auditEventsDlqUrl,
      ARTIFACTS_BUCKET: names.bucket,
      // The local keyring of account secrets (shared/keyring.ts): created 0600 on first use.
      SECRETS_KEY_FILE: join(dataDir ?? `${s3Dir}-keys`, 'secrets.key'),
      // The key of reviewers' links (shared/domain/review-links.ts): links already mailed survive a restart.
      REVIEW_LINK_KEY_FILE: join(dataDir ?? `${s3Dir}-keys`, 'review-links.key'),
    };
    const pids = { dynamodb: java.pid as number, sqs: sqs.child.pid as number, s3: s3.child.pid as number, ses: ses.child.pid as number };
    if (dataDir) writeState(dataDir, { env, pids, javaPid: pids.dynamodb, tmpfs: folder?.tmpfs, ses: endpoints.ses });
    return { env, pids, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** The emulator environment of a running `npm start` (for the operator CLI). */
export function runningEmulatorsEnv(dataDir: string): Record<string, string> | undefined {
  const env = readState(dataDir)?.env;
  return env?.TABLE_NAME ? env : undefined;
}
