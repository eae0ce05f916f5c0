// The local stack under test as a process of its own, started from a source tree the way its
// `npm start` starts it, so `npm run bench -- load` measures it from outside (and can measure
// another commit's tree beside the working tree).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Demo } from '../../infra/local/seed.ts';
import { alive, commandLine, cpuMs, descendants } from './proc-cpu.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type { Demo };

/**
 * `DATA_DIR/emulators.json`: the emulators' environment, and their processes: `pids` when each
 * emulator runs in a process of its own, `javaPid` (DynamoDB Local) when SQS and S3 run inside the
 * stack's process.
 */
type EmulatorsFile = { env: Record<string, string>; pids?: Record<string, number>; javaPid?: number };

/** Counts written by `http-count-preload.mjs`: service → operation → requests and bytes. */
export type HttpCounts = Record<string, Record<string, { n: number; sent: number; received: number }>>;

/** Who CPU time is attributed to: the stack's own process, each emulator found, by name. */
export type CpuGroups = Record<string, number[]>;

/** Names of the emulators' processes by their command lines, for trees whose emulators.json lists no `pids`. */
const EMULATOR_COMMANDS: [string, RegExp][] = [
  ['dynamodb', /DynamoDBLocal/],
  ['sqs', /sqs/i],
  ['s3', /s3rver|\bs3\b/i],
  ['ses', /\bses\b/i],
];

const PRELOAD = pathToFileURL(join(import.meta.dirname, 'http-count-preload.mjs')).href;

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** The command `npm start` runs in `tree`, as arguments to its own Node binary. */
function startArguments(tree: string): string[] {
  const start: string = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')).scripts?.start ?? '';
  // `node scripts/ensure.mjs start && node --import tsx infra/local/main.ts`: the stack is the last command (the first installs what is missing).
  const words = (start.split('&&').pop() ?? '').trim().split(/\s+/);
  if (words[0] === 'node') return words.slice(1);
  if (words[0] === 'tsx') return ['--import', 'tsx', ...words.slice(1)];
  throw new Error(`${tree}: cannot run its "npm start" (${start}) as a node process`);
}

/** The tree's Node (the `node` dev dependency), not the system's. */
function nodeBinary(tree: string): string {
  const local = join(tree, 'node_modules', '.bin', 'node');
  if (existsSync(local)) return local;
  return execFileSync('npm', ['exec', '--', 'node', '-p', 'process.execPath'], { cwd: tree, encoding: 'utf8' }).trim();
}

export type StackProcess = Awaited<ReturnType<typeof startStackProcess>>;

/**
 * Start the local stack of `tree` (`npm start`'s command, with the tree's Node) on 127.0.0.1 with a
 * fresh data folder, the HTTP counting preload, logs silenced and the plan's rate limit lifted (the
 * bench measures the stack, not the limiter); resolves when `/api/health` answers 200 and the demo
 * is seeded.
 */
export async function startStackProcess(tree: string, launchEnv: NodeJS.ProcessEnv, opts: { logFile?: string } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-bench-'));
  const port = await freePort();
  // BENCH_CPU_PROF_DIR: the stack process writes a V8 CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = launchEnv.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${launchEnv.BENCH_CPU_PROF_DIR}`] : [];
  const child: ChildProcess = spawn(nodeBinary(tree), [...profile, ...startArguments(tree)], {
    cwd: tree,
    env: {
      ...launchEnv,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      RATE_LIMITS: JSON.stringify({ free: 1_000_000, pro: 1_000_000, team: 1_000_000, enterprise: 1_000_000 }),
      NODE_OPTIONS: `${launchEnv.NODE_OPTIONS ?? ''} --import ${PRELOAD}`.trim(),
      FLOWGATE_BENCH_COUNTS: dataDir,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const log = opts.logFile ? createWriteStream(opts.logFile) : undefined;
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
    log?.write(c);
  });
  const pid = child.pid as number;
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let emulators: EmulatorsFile = { env: {} };
  /** Processes stopped by `pause()`. */
  let paused: number[] = [];
  const resume = () => {
    for (const p of paused.filter(alive)) process.kill(p, 'SIGCONT');
    paused = [];
  };

  const stop = async () => {
    resume();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    // Emulators that outlive the stack by design (or by a crash) are this bench's: its data folder is.
    const left = [...Object.values(emulators.pids ?? {}), ...(emulators.javaPid ? [emulators.javaPid] : [])].filter(alive);
    for (const p of left) process.kill(p, 'SIGTERM');
    for (let i = 0; i < 50 && left.some(alive); i++) await sleep(100);
    for (const p of left.filter(alive)) process.kill(p, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };

  try {
    const demoFile = join(dataDir, 'demo.json');
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the stack of ${tree} exited (${child.exitCode}):\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`the stack of ${tree} was not ready in 180 s:\n${stderr}`);
      const healthy = await fetch(`${url}/api/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (healthy && existsSync(demoFile)) break;
      await sleep(250);
    }
    const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as Demo;
    emulators = JSON.parse(readFileSync(join(dataDir, 'emulators.json'), 'utf8')) as EmulatorsFile;

    /** The processes of each party: the emulators listed by the stack or found below it by command line, and the rest. */
    const groups = (): CpuGroups => {
      const below = descendants(pid);
      const named: Record<string, number> = { ...(emulators.javaPid ? { dynamodb: emulators.javaPid } : {}), ...emulators.pids };
      for (const p of below) {
        const cmd = commandLine(p);
        const found = EMULATOR_COMMANDS.find(([name, re]) => named[name] === undefined && re.test(cmd));
        if (found) named[found[0]] = p;
      }
      const out: CpuGroups = {};
      for (const [name, root] of Object.entries(named)) out[name] = [root, ...descendants(root)];
      const taken = new Set(Object.values(out).flat());
      out.functions = [pid, ...below.filter((p) => !taken.has(p))];
      return out;
    };

    let seq = 0;
    /** The preload's totals now, and the server's requests in flight: asks with SIGUSR2 and waits for the file it writes. */
    const counts = async (): Promise<{ totals: HttpCounts; serverInFlight: number }> => {
      const file = join(dataDir, `counts-${pid}.json`);
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 500; i++) {
        if (existsSync(file)) {
          const c = JSON.parse(readFileSync(file, 'utf8')) as { seq: number; totals: HttpCounts; serverInFlight: number };
          if (c.seq > seq) {
            seq = c.seq;
            return c;
          }
        }
        await sleep(10);
      }
      throw new Error('the stack did not write its HTTP counts (is the preload loaded?)');
    };

    /** CPU milliseconds used so far by each process of each group. */
    const cpu = (): Record<string, Map<number, number>> =>
      Object.fromEntries(Object.entries(groups()).map(([name, pids]) => [name, new Map(pids.map((p) => [p, cpuMs([p])]))]));

    /** Stop every process of the stack (SIGSTOP) while another tree is measured, so its idle work takes no CPU from it. */
    const pause = () => {
      paused = Object.values(groups()).flat();
      for (const p of paused) process.kill(p, 'SIGSTOP');
    };

    return { tree, url, pid, demo, env: emulators.env, groups, counts, cpu, pause, resume, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
