// `npm run bench -- load`: runs per second of the local stack started as a process (as `npm start`
// starts it), loaded from outside with autocannon, and where every millisecond of CPU per completed
// run goes: our functions, each emulator, the load generator; with DynamoDB Local's requests per run
// by operation and their bytes. `--against <ref>` measures another commit's tree beside the working
// tree, alternating; `--peer <summary.json>` prints the n8n peer's figures beside ours.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { runLoad } from './autocannon.ts';
import type { LoadResult, LoadSpec } from './load-client.ts';
import { type Peer, type PeerRow, readPeer } from './peer.ts';
import { type HttpCounts, type StackProcess, startStackProcess } from './stack-process.ts';

export type LoadOptions = {
  /** Seconds of load per row. */
  seconds: number;
  connections: number[];
  /** Rounds of every row; with `against`, each round measures both trees, in alternating order. */
  rounds: number;
  /** Warm-up at 10 connections before the first row: this many seconds ... */
  warmupSeconds: number;
  /** ... or this many runs. */
  warmupRuns?: number;
  /** A git ref whose tree is measured beside the working tree. */
  against?: string;
  /** The n8n peer's summary.json (or its results folder), and its webhook. */
  peer?: string;
  peerTarget?: string;
  /**
   * `set` (default): webhook → one `set` step, the peer's bench-auth shape. `realistic`: webhook → set →
   * http_request (a local target answering after 20 ms) → switch → set, the peer's bench-auth-realistic
   * (test/bench/peer/bench-auth-realistic.json).
   */
  workload?: 'set' | 'realistic';
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The peer's request body; its Set step reads both fields, as ours does. */
const BODY = JSON.stringify({ orderId: 'A-1', amount: 42 });
/** One `set` step with two expressions: the shape of the peer's bench-auth workflow (Webhook → Set). */
const DEFINITION = {
  variables: { orderId: { type: 'string', default: '' }, amount: { type: 'number', default: 0 } },
  steps: [{ id: 'set', type: 'set', values: { order: '{% $vars.orderId %}', total: '{% $vars.amount %}' } }],
};

/** Where the realistic workload's http_request goes, for both us and the peer: a listener answering `{"ok":true}` after 20 ms. */
export const TARGET_PORT = Number(process.env.BENCH_TARGET_PORT ?? 5699);
const REALISTIC = {
  variables: DEFINITION.variables,
  steps: [
    { id: 'prepare', type: 'set', values: { order: '{% $vars.orderId %}', total: '{% $vars.amount %}' } },
    {
      id: 'call',
      type: 'http_request',
      method: 'POST',
      url: `http://127.0.0.1:${TARGET_PORT}/slow`,
      body: '{% {"order": $vars.orderId} %}',
    },
    { id: 'route', type: 'switch', cases: [{ when: '{% $steps.call.body.ok = true %}', next: 'done' }], default: 'done' },
    { id: 'done', type: 'set', values: { routed: true } },
  ],
};

/** The realistic workload's target on 127.0.0.1: `{"ok":true}` after 20 ms (`npm run bench -- target` alone, for the peer). */
export async function startTarget(port = TARGET_PORT) {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 20));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return () => new Promise<void>((r) => server.close(() => r()));
}

export type Row = {
  connections: number;
  requests: number;
  /** Runs the stack started during the row (v1 listing), every one SUCCEEDED by the end of the drain. */
  runs: number;
  /** Trigger answers autocannon received (200s): fewer than the runs by those in flight when its time was up. */
  answered: number;
  non2xx: number;
  errors: number;
  /** Runs ended per second over the load and the drain that followed it. */
  runsPerSecond: number;
  p50: number;
  p99: number;
  /** Seconds from the end of the load until the queues were empty (every run ended). */
  drainSeconds: number;
  /** CPU milliseconds per run over load + drain: `functions` (the stack's process), each emulator found, `stack` (their sum), `loadGenerator`. */
  cpuMsPerRun: Record<string, number>;
  /** The stack's outgoing HTTP requests per run, by service (dynamodb, sqs, s3, other) and operation. */
  requestsPerRun: Record<string, Record<string, number>>;
  /** Bytes per request by service, on the socket (HTTP headers included). */
  bytesPerRequest: Record<string, { sent: number; received: number }>;
};

type Tree = {
  label: string;
  dir: string;
  commit: string;
  stack?: StackProcess;
  /** What the stack's own process holds besides our functions. */
  functionsCover?: string;
  trigger?: Omit<LoadSpec, 'connections'>;
  workflowId?: string;
  rounds: Row[][];
};

const git = (args: string[], cwd = process.cwd()) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A detached worktree of `ref` in a temp folder, with node_modules linked when the lock file is the same, else installed. */
function checkout(ref: string): { dir: string; commit: string; remove: () => void } {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = mkdtempSync(join(tmpdir(), 'flowgate-ref-'));
  git(['worktree', 'add', '--detach', dir, commit]);
  const link = join(dir, 'node_modules');
  const sameLock = git(['show', `${commit}:package-lock.json`]) === readFileSync('package-lock.json', 'utf8').trim();
  if (sameLock) symlinkSync(resolve('node_modules'), link, 'dir');
  else {
    console.error(`${ref}: package-lock.json differs from the working tree's; npm ci in ${dir}`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return {
    dir,
    commit,
    remove: () => {
      if (sameLock) unlinkSync(link);
      git(['worktree', 'remove', '--force', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function call<T>(stack: StackProcess, path: string, init: { method?: string; token?: string; key?: string; body?: unknown } = {}) {
  const res = await fetch(`${stack.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.key ? { 'x-api-key': init.key } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const body = (await res.json().catch(() => undefined)) as T;
  return { status: res.status, body };
}

async function ok<T>(stack: StackProcess, path: string, init: Parameters<typeof call>[2] = {}): Promise<T> {
  const { status, body } = await call<T>(stack, path, init);
  if (status >= 300) throw new Error(`${init.method ?? 'GET'} ${path} answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * Through the public API, as a user would: log in as the demo admin, create the one-step workflow and a
 * webhook bound to the demo key, and check that the key in `X-API-Key` starts a run and a wrong one is refused.
 */
async function prepare(tree: Tree, workload: LoadOptions['workload']) {
  const stack = tree.stack as StackProcess;
  const { demo } = stack;
  const { token } = await ok<{ token: string }>(stack, '/api/auth/login', {
    method: 'POST',
    body: { email: demo.adminEmail, password: demo.adminPassword },
  });
  // The views name their id `id` (older commits: `workflowId`, `webhookId`).
  const workflow = await ok<{ id?: string; workflowId?: string }>(stack, '/api/workflows', {
    method: 'POST',
    token,
    body:
      workload === 'realistic'
        ? { name: 'bench: webhook → set → http_request → switch → set', definition: REALISTIC }
        : { name: 'bench: webhook → set', definition: DEFINITION },
  });
  const workflowId = workflow.id ?? workflow.workflowId;
  const apiKeyId = demo.apiKey.split('_')[1];
  const webhook = await ok<{ id?: string; webhookId?: string }>(stack, '/api/webhooks', {
    method: 'POST',
    token,
    body: { workflowId, name: 'bench', apiKeyId },
  });
  const path = `/api/webhooks/${webhook.id ?? webhook.webhookId}/trigger`;
  await ok(stack, path, { method: 'POST', key: demo.apiKey, body: JSON.parse(BODY) });
  const wrong = await call(stack, path, { method: 'POST', key: `${demo.apiKey.slice(0, -1)}x`, body: JSON.parse(BODY) });
  if (wrong.status !== 401) throw new Error(`a wrong key answered ${wrong.status}, not 401`);
  tree.workflowId = workflowId;
  tree.trigger = {
    url: stack.url,
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', 'x-api-key': demo.apiKey },
    body: BODY,
  };
  const groups = Object.keys(stack.groups());
  const inProcess = ['sqs', 's3'].filter((g) => !groups.includes(g)).map((g) => g.toUpperCase());
  tree.functionsCover = inProcess.length
    ? `our functions + in-process ${inProcess.join(' and ')} emulator${inProcess.length > 1 ? 's' : ''}`
    : 'our functions';
}

/**
 * Until the stack's server has answered (or dropped) every request, so no trigger is still starting a
 * run, and then until the runs (both lanes) and notification queues hold nothing, visible, in flight or delayed:
 * every run has ended.
 */
async function drain(stack: StackProcess, sqs: SQSClient, timeoutMs = 300_000) {
  // Both runs lanes: a loaded account's runs go to the heavy lane once it is over the threshold (shared/engine/lanes.ts).
  const queues = [stack.env.RUNS_QUEUE_URL, stack.env.HEAVY_RUNS_QUEUE_URL, stack.env.NOTIFY_QUEUE_URL].filter(Boolean) as string[];
  const deadline = Date.now() + timeoutMs;
  while ((await stack.counts()).serverInFlight > 0) {
    if (Date.now() > deadline) throw new Error(`the stack's server did not answer its requests in ${timeoutMs / 1000} s`);
    await sleep(50);
  }
  for (;;) {
    let left = 0;
    for (const QueueUrl of queues) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      left += Object.values(Attributes).reduce((n, v) => n + Number(v), 0);
    }
    if (left === 0) return;
    if (Date.now() > deadline) throw new Error(`queues not drained in ${timeoutMs / 1000} s: ${left} messages left`);
    await sleep(100);
  }
}

type ListedRun = { executionId: string; status: string };

/** The workflow's newest run, if any (v1 API). */
async function newestRun(tree: Tree): Promise<string | undefined> {
  const stack = tree.stack as StackProcess;
  const { items } = await ok<{ items: ListedRun[] }>(stack, `/api/v1/executions?workflowId=${tree.workflowId}&limit=1`, {
    key: stack.demo.apiKey,
  });
  return items[0]?.executionId;
}

/**
 * The runs of the workflow newer than `since`, read through the v1 API (newest first, page by page),
 * each of which must have SUCCEEDED: what the empty queues said. The count is the runs the stack
 * started, including those of requests autocannon stopped waiting for when its time was up.
 */
async function runsSince(tree: Tree, since: string | undefined): Promise<number> {
  const stack = tree.stack as StackProcess;
  let count = 0;
  let cursor: string | null = null;
  do {
    const page: { items: ListedRun[]; nextCursor: string | null } = await ok(
      stack,
      `/api/v1/executions?workflowId=${tree.workflowId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { key: stack.demo.apiKey },
    );
    for (const run of page.items) {
      if (run.executionId === since) return count;
      if (run.status !== 'SUCCEEDED') throw new Error(`${tree.label}: run ${run.executionId} is ${run.status} after the queues drained`);
      count += 1;
    }
    cursor = page.nextCursor;
  } while (cursor);
  if (since) throw new Error(`${tree.label}: run ${since} is no longer listed`);
  return count;
}

type Snapshot = { cpu: Record<string, Map<number, number>>; counts: HttpCounts };

const snapshot = async (stack: StackProcess): Promise<Snapshot> => ({ counts: (await stack.counts()).totals, cpu: stack.cpu() });

/** CPU ms each group used between two snapshots (a process that appeared in between counts from 0). */
function cpuBetween(a: Snapshot, b: Snapshot): Record<string, number> {
  const before = new Map(Object.values(a.cpu).flatMap((m) => [...m]));
  return Object.fromEntries(
    Object.entries(b.cpu).map(([group, m]) => [
      group,
      [...m].reduce((sum, [pid, ms]) => sum + Math.max(0, ms - (before.get(pid) ?? 0)), 0),
    ]),
  );
}

function countsBetween(a: HttpCounts, b: HttpCounts): HttpCounts {
  const out: HttpCounts = {};
  for (const [service, ops] of Object.entries(b)) {
    for (const [op, t] of Object.entries(ops)) {
      const was = a[service]?.[op] ?? { n: 0, sent: 0, received: 0 };
      if (t.n === was.n) continue;
      out[service] ??= {};
      out[service][op] = { n: t.n - was.n, sent: t.sent - was.sent, received: t.received - was.received };
    }
  }
  return out;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

async function measureRow(tree: Tree, sqs: SQSClient, connections: number, seconds: number): Promise<Row> {
  const stack = tree.stack as StackProcess;
  const since = await newestRun(tree);
  const before = await snapshot(stack);
  const r: LoadResult = await runLoad({ ...(tree.trigger as Omit<LoadSpec, 'connections'>), connections, seconds });
  const loadEnded = Date.now();
  await drain(stack, sqs);
  const drainSeconds = (Date.now() - loadEnded) / 1000;
  const after = await snapshot(stack);
  const runs = await runsSince(tree, since);

  const per = (x: number) => (runs > 0 ? x / runs : Number.NaN);
  const cpu = cpuBetween(before, after);
  const stackMs = Object.values(cpu).reduce((a, b) => a + b, 0);
  const cpuMsPerRun = Object.fromEntries(
    Object.entries({ ...cpu, stack: stackMs, loadGenerator: r.cpuMs }).map(([k, v]) => [k, round(per(v), 1)]),
  );
  const counts = countsBetween(before.counts, after.counts);
  const requestsPerRun: Row['requestsPerRun'] = {};
  const bytesPerRequest: Row['bytesPerRequest'] = {};
  for (const [service, ops] of Object.entries(counts)) {
    const all = Object.values(ops).reduce((s, t) => ({ n: s.n + t.n, sent: s.sent + t.sent, received: s.received + t.received }), {
      n: 0,
      sent: 0,
      received: 0,
    });
    requestsPerRun[service] = Object.fromEntries(Object.entries(ops).map(([op, t]) => [op, round(per(t.n), 2)]));
    bytesPerRequest[service] = { sent: Math.round(all.sent / all.n), received: Math.round(all.received / all.n) };
  }
  return {
    connections,
    requests: r.requests,
    runs,
    answered: r.statusCodes['200'] ?? 0,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    runsPerSecond: round(runs / (r.seconds + drainSeconds), 1),
    p50: r.p50,
    p99: r.p99,
    drainSeconds: round(drainSeconds, 2),
    cpuMsPerRun,
    requestsPerRun,
    bytesPerRequest,
  };
}

const median = (xs: number[]) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/** The median of each figure over the rounds (an operation missing from a round counts 0 there). */
function medianRow(rows: Row[]): Row {
  const m = (f: (r: Row) => number | undefined) => median(rows.map((r) => f(r) ?? 0));
  const keys = (f: (r: Row) => object | undefined) => [...new Set(rows.flatMap((r) => Object.keys(f(r) ?? {})))];
  const first = rows[0] as Row;
  return {
    connections: first.connections,
    requests: m((r) => r.requests),
    runs: m((r) => r.runs),
    answered: m((r) => r.answered),
    non2xx: m((r) => r.non2xx),
    errors: m((r) => r.errors),
    runsPerSecond: m((r) => r.runsPerSecond),
    p50: m((r) => r.p50),
    p99: m((r) => r.p99),
    drainSeconds: m((r) => r.drainSeconds),
    cpuMsPerRun: Object.fromEntries(keys((r) => r.cpuMsPerRun).map((k) => [k, m((r) => r.cpuMsPerRun[k])])),
    requestsPerRun: Object.fromEntries(
      keys((r) => r.requestsPerRun).map((s) => [
        s,
        Object.fromEntries(keys((r) => r.requestsPerRun[s]).map((op) => [op, m((r) => r.requestsPerRun[s]?.[op])])),
      ]),
    ),
    bytesPerRequest: Object.fromEntries(
      keys((r) => r.bytesPerRequest).map((s) => [
        s,
        { sent: m((r) => r.bytesPerRequest[s]?.sent), received: m((r) => r.bytesPerRequest[s]?.received) },
      ]),
    ),
  };
}

const EMULATOR_NAMES: Record<string, string> = { dynamodb: 'DynamoDB Local', sqs: 'SQS emulator', s3: 'S3 emulator', ses: 'SES emulator' };
const SERVICE_NAMES: Record<string, string> = { dynamodb: 'DynamoDB', sqs: 'SQS', s3: 'S3', other: 'other HTTP' };

type Column = { name: string; row?: Row; peer?: PeerRow };

/** One table per connection count: a line per figure, a column per tree (and the peer), with ratios. */
function table(columns: Column[], ratios: [number, number, string][]): Record<string, Record<string, string>> {
  const rows = columns.flatMap((c) => (c.row ? [c.row] : []));
  const out: Record<string, Record<string, string>> = {};
  const fmt = (x: number | undefined, digits: number) => (x === undefined || Number.isNaN(x) ? '' : x.toFixed(digits));
  const line = (label: string, digits: number, ours: (r: Row) => number | undefined, peer?: (p: PeerRow) => number | undefined) => {
    const values = columns.map((c) => (c.row ? ours(c.row) : c.peer && peer ? peer(c.peer) : undefined));
    const cells: Record<string, string> = {};
    columns.forEach((c, i) => {
      cells[c.name] = fmt(values[i], digits);
    });
    for (const [a, b, name] of ratios) {
      const [x, y] = [values[a], values[b]];
      cells[name] = x !== undefined && y !== undefined && y !== 0 && !Number.isNaN(x) && !Number.isNaN(y) ? (x / y).toFixed(2) : '';
    }
    out[label] = cells;
  };
  line(
    'runs ended/s',
    1,
    (r) => r.runsPerSecond,
    (p) => p.runsPerSecond,
  );
  line(
    'p50 ms',
    0,
    (r) => r.p50,
    (p) => p.p50,
  );
  line(
    'p99 ms',
    0,
    (r) => r.p99,
    (p) => p.p99,
  );
  line(
    'drain s',
    2,
    (r) => r.drainSeconds,
    (p) => p.drainSeconds,
  );
  line('runs started (all SUCCEEDED)', 0, (r) => r.runs);
  line('trigger 200s received', 0, (r) => r.answered);
  line('non-2xx + errors', 0, (r) => r.non2xx + r.errors);
  line(
    'CPU ms/run: stack process',
    1,
    (r) => r.cpuMsPerRun.functions,
    (p) => p.cpuMsPerRun,
  );
  const groups = [...new Set(rows.flatMap((r) => Object.keys(r.cpuMsPerRun)))].filter(
    (g) => !['functions', 'stack', 'loadGenerator'].includes(g),
  );
  for (const g of groups) line(`CPU ms/run: ${EMULATOR_NAMES[g] ?? g}`, 1, (r) => r.cpuMsPerRun[g]);
  line(
    'CPU ms/run: stack total',
    1,
    (r) => r.cpuMsPerRun.stack,
    (p) => p.cpuMsPerRun,
  );
  line('CPU ms/run: load generator', 1, (r) => r.cpuMsPerRun.loadGenerator);
  for (const service of ['dynamodb', 'sqs', 's3', 'other']) {
    const ops = [...new Set(rows.flatMap((r) => Object.keys(r.requestsPerRun[service] ?? {})))].sort();
    if (ops.length === 0) continue;
    const name = SERVICE_NAMES[service] ?? service;
    line(`${name} requests/run`, 2, (r) => Object.values(r.requestsPerRun[service] ?? {}).reduce((a, b) => a + b, 0));
    for (const op of ops) line(`  ${op}/run`, 2, (r) => r.requestsPerRun[service]?.[op] ?? 0);
    line(`${name} bytes sent/request`, 0, (r) => r.bytesPerRequest[service]?.sent);
    line(`${name} bytes received/request`, 0, (r) => r.bytesPerRequest[service]?.received);
  }
  return out;
}

/**
 * Start the stack of each tree (the working tree, and `against`'s), set each up and warm it, then
 * measure every connection count for `rounds` rounds, the trees alternating (round 2 in the other
 * order), and print one table per connection count with the medians, the ratio and the peer.
 */
export async function measureLoad(opts: LoadOptions, launchEnv: NodeJS.ProcessEnv) {
  const dirty = git(['status', '--porcelain']) !== '';
  const trees: Tree[] = [
    { label: 'working tree', dir: process.cwd(), commit: `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? '+changes' : ''}`, rounds: [] },
  ];
  const cleanups: (() => Promise<void> | void)[] = [];
  const cleanUp = async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch((e: unknown) => console.error('cleanup failed:', e));
  };
  const onSignal = () => {
    void cleanUp().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const peer: Peer | undefined = opts.peer ? readPeer(opts.peer, opts.peerTarget) : undefined;
  if (opts.workload === 'realistic') {
    cleanups.push(await startTarget());
    // Our http_request steps may call the target on 127.0.0.1 (private addresses are refused by default).
    launchEnv = { ...launchEnv, HTTP_STEP_ALLOWLIST: '127.0.0.1/32' };
  }
  try {
    if (opts.against) {
      const ref = checkout(opts.against);
      cleanups.push(ref.remove);
      trees.push({ label: `${opts.against} (${ref.commit.slice(0, 7)})`, dir: ref.dir, commit: ref.commit.slice(0, 7), rounds: [] });
    }
    const clients = new Map<Tree, SQSClient>();
    for (const tree of trees) {
      for (const t of trees) t.stack?.pause();
      console.error(`starting the stack of ${tree.label} (${tree.dir})`);
      const stack = await startStackProcess(tree.dir, launchEnv);
      tree.stack = stack;
      cleanups.push(stack.stop);
      const sqs = new SQSClient({
        region: stack.env.AWS_REGION,
        endpoint: stack.env.AWS_ENDPOINT_URL_SQS,
        credentials: { accessKeyId: stack.env.AWS_ACCESS_KEY_ID as string, secretAccessKey: stack.env.AWS_SECRET_ACCESS_KEY as string },
      });
      clients.set(tree, sqs);
      cleanups.push(() => sqs.destroy());
      await prepare(tree, opts.workload);
      const warm = opts.warmupRuns ? `${opts.warmupRuns} runs` : `${opts.warmupSeconds} s`;
      console.error(`${tree.label}: warm-up, ${warm} at 10 connections`);
      const w = await runLoad({
        ...(tree.trigger as Omit<LoadSpec, 'connections'>),
        connections: 10,
        ...(opts.warmupRuns ? { amount: opts.warmupRuns } : { seconds: opts.warmupSeconds }),
      });
      await drain(stack, sqs);
      console.error(`${tree.label}: warm-up done, ${w.statusCodes['200'] ?? 0} runs answered`);
    }
    // The stack not being measured is paused (SIGSTOP), so its idle polling (about 50 ms of CPU a
    // second) does not load the machine; it gets a second to catch up on its timers when resumed.
    const pauseAllBut = async (measured: Tree) => {
      if (trees.length === 1) return;
      for (const t of trees) if (t !== measured) t.stack?.pause();
      measured.stack?.resume();
      await sleep(1000);
    };
    for (let i = 0; i < opts.rounds; i++) {
      for (const tree of i % 2 === 0 ? trees : [...trees].reverse()) {
        await pauseAllBut(tree);
        const rows: Row[] = [];
        for (const c of opts.connections) {
          const row = await measureRow(tree, clients.get(tree) as SQSClient, c, opts.seconds);
          rows.push(row);
          console.error(
            `round ${i + 1}, ${tree.label}, ${c} connections: ${row.runsPerSecond} runs/s, p50 ${row.p50} ms, p99 ${row.p99} ms, ` +
              `CPU ${row.cpuMsPerRun.stack} ms/run (stack process ${row.cpuMsPerRun.functions})`,
          );
        }
        tree.rounds.push(rows);
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanUp();
  }

  const medians = trees.map((t) => opts.connections.map((_, j) => medianRow(t.rounds.map((rows) => rows[j] as Row))));
  const tables: Record<string, Record<string, Record<string, string>>> = {};
  const [tree, ref] = trees;
  for (const [j, c] of opts.connections.entries()) {
    const columns: Column[] = medians.map((m, k) => ({ name: k === 0 ? 'tree' : 'ref', row: m[j] }));
    const ratios: [number, number, string][] = ref ? [[0, 1, 'tree ÷ ref']] : [];
    const peerRow = peer?.rows.find((p) => p.connections === c);
    if (peer) {
      columns.push({ name: 'n8n', peer: peerRow });
      ratios.push([0, columns.length - 1, 'tree ÷ n8n']);
    }
    const t = table(columns, ratios);
    tables[String(c)] = t;
    console.log(
      `\nLoad: webhook (key in X-API-Key) → ${opts.workload === 'realistic' ? 'set → http_request (20 ms) → switch → set' : 'one set step'}, ${c} connection${c > 1 ? 's' : ''}, ${opts.seconds} s × ${opts.rounds} rounds (medians)`,
    );
    console.table(t);
  }
  console.log(`tree: ${tree?.label} at ${tree?.commit}; its stack process holds ${tree?.functionsCover}`);
  if (ref) console.log(`ref: ${ref.label}; its stack process holds ${ref.functionsCover}`);
  if (peer)
    console.log(
      `n8n: ${peer.file} (${peer.target}); its CPU is n8n's main process and task runner per completed run${peer.rows.every((r) => r.cpuExact) ? '' : ' (estimated from CPU %: no runs.tsv beside it)'}`,
    );
  return {
    settings: opts,
    trees: trees.map((t, k) => ({
      label: t.label,
      commit: t.commit,
      stackProcessHolds: t.functionsCover,
      median: medians[k],
      rounds: t.rounds,
    })),
    peer,
    tables,
  };
}
