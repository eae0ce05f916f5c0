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
import { join } from 'node:path';

const STATE_FILE = 'emulators.json';

/** The emulators' processes: DynamoDB Local's JVM and the SQS, S3 and SES emulators' Node processes. */
export type EmulatorPids = { dynamodb: number; sqs: number; s3: number; ses: number };

/** What `<dataDir>/emulators.json` holds while (and after) `npm start` runs. */
export type State = {
  env: Record<string, string>;
  pids: EmulatorPids;
  /** = pids.dynamodb (older readers). */
  javaPid: number;
  /** DynamoDB Local's working folder when it is on tmpfs, and the id that ties it to this DATA_DIR. */
  tmpfs?: { dir: string; id: string };
  /** The SES emulator's address: its web viewer of the mail sent (`/`), the mail as JSON (`/store`). */
  ses?: string;
};

export function readState(dataDir: string): State | undefined {
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

export function writeState(dataDir: string, state: State) {
  writeFileSync(join(dataDir, STATE_FILE), JSON.stringify(state, null, 2));
}

/**
 * A previous `npm start` killed with SIGKILL leaves DynamoDB Local behind holding its database (its
 * SQS and S3 emulators exit with it; should one not, it is here too): end each recorded process that
 * is still the emulator it was (its command line says so), and wait until it is gone.
 */
export async function killStale(state: State) {
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
export function dynamoDbFolder(dataDir: string, previous: State | undefined): { dir: string; tmpfs?: { dir: string; id: string } } {
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
export function saveToDisk(dataDir: string, tmpfsDir: string) {
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
