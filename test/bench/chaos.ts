// `npm run bench -- chaos`: mixed work on a local stack under every FAULTS kind (docs/local-mode.md),
// through the public API as a careful client does it, then a check of what must hold whatever the
// faults (issue 40, part 4; docs/performance.md "Chaos"). A short version joins the suite once every invariant holds (docs/performance.md).
import type { Demo } from '../../infra/local/seed.ts';
import { VOTE_ROOM } from '../../shared/db/entities/run-events.ts';
import { type Answer, type AnswerLog, client, newAnswerLog, startListener } from './chaos-client.ts';

/** Every fault kind at 5 %, as the issue asks. */
export const CHAOS_FAULTS =
  'dynamodb.throttle:0.05,dynamodb.error:0.05,sqs.duplicate:0.05,sqs.delay:0.05,s3.slowdown:0.05,lambda.crash:0.05,lambda.timeout:0.05';

export type ChaosTarget = {
  url: string;
  demo: Demo;
  /** The messages on each dead-letter or on-failure queue when the soak ends (bodies), by queue name. */
  deadLetters?: () => Promise<Record<string, string[]>>;
  /** What the stack logged. */
  logs?: () => string;
};
export type ChaosOptions = { runs: number; concurrency?: number; settleSeconds?: number; progress?: (line: string) => void };
export type Row = { invariant: string; checked: number; held: boolean; detail: string };

const KINDS = ['webhook', 'webhook', 'for_each', 'approval', 'callback'] as const;
const CHANNELS = ['POST', 'v1', 'one-click', 'console'] as const;
const TERMINAL = new Set(['execution.succeeded', 'execution.failed', 'execution.cancelled']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function definitions(listener: string) {
  const hit = (suffix: string) => `{% '${listener}/hit/' & $execution.id${suffix} %}`;
  return {
    webhook: {
      steps: [
        { id: 'a', type: 'set', values: { a: 1 } },
        { id: 'call', type: 'http_request', method: 'POST', url: hit(''), timeoutMs: 5000 },
        { id: 'b', type: 'set', values: { b: 2 } },
        { id: 'report', type: 'artifact', name: 'report.txt', content: "{% 'chaos ' & $execution.id %}" },
      ],
    },
    for_each: {
      steps: [
        {
          id: 'each',
          type: 'for_each',
          items: '{% [1..3] %}',
          steps: [{ id: 'call', type: 'http_request', method: 'POST', url: hit(" & '/' & $string($item)"), timeoutMs: 5000 }],
        },
      ],
    },
    approval: {
      steps: [
        { id: 'approve', type: 'manual_approval', title: 'Chaos', reviewers: ['role:admin'] },
        { id: 'after', type: 'set', values: { done: true } },
      ],
    },
    callback: {
      steps: [
        {
          id: 'wait',
          type: 'wait_for_callback',
          timeoutSeconds: 3600,
          request: {
            method: 'POST',
            url: `{% '${listener}/capture/' & $execution.id %}`,
            body: "{% { 'url': $callback.url, 'token': $callback.token } %}",
          },
        },
        { id: 'after', type: 'set', values: { done: true } },
      ],
    },
    schedule: { steps: [{ id: 'tick', type: 'set', values: { t: 1 } }] },
  };
}

const must = (what: string, res: Answer, ok: (s: number) => boolean = (s) => s < 300) => {
  if (!ok(res.status)) throw new Error(`${what}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.json;
};

/** Run the soak against `target`; returns a row per invariant, the faults the stack counted and the answers. */
export async function chaosSoak(target: ChaosTarget, opts: ChaosOptions) {
  const started = Date.now();
  const log: AnswerLog = newAnswerLog();
  const call = client(target.url, log);
  const listener = await startListener();
  const key = target.demo.apiKey;
  const progress = opts.progress ?? (() => undefined);
  try {
    const { token } = must(
      'login',
      await call('/api/auth/login', { json: { email: target.demo.adminEmail, password: target.demo.adminPassword } }),
    );
    const cookie = `flowgate_session=${token}`;
    const defs = definitions(listener.base);
    const workflows: Record<string, string> = {};
    for (const [kind, definition] of Object.entries(defs))
      workflows[kind] = must(
        `workflow ${kind}`,
        await call('/api/workflows', { token, json: { name: `chaos ${kind} ${started}`, definition, recovery: kind !== 'webhook' } }),
      ).id;
    const apiKeyId = key.split('_')[1];
    const webhook = must(
      'webhook',
      await call('/api/webhooks', { token, json: { workflowId: workflows.webhook, name: 'chaos', apiKeyId } }),
    );
    for (const n of [1, 2])
      must(
        'schedule',
        await call(`/api/workflows/${workflows.schedule}/schedules`, { token, json: { name: `chaos ${n}`, expression: 'rate(1 minute)' } }),
      );

    const decisions = new Map<string, number>();
    const reports = new Map<string, number>();
    /** Poll a run until `done` holds for it (resuming it when it was interrupted, as its operator would). */
    const until = async (executionId: string, done: (e: any) => boolean) => {
      for (let i = 0; i < 600; i++) {
        const e = (await call(`/api/v1/executions/${executionId}`, { key })).json;
        if (e && done(e)) return e;
        if (e?.status === 'INTERRUPTED') await call(`/api/v1/executions/${executionId}/resume`, { key, json: {}, final: () => true });
        await sleep(250);
      }
      throw new Error(`run ${executionId} never got there`);
    };
    const decide = async (approvalId: string, channel: (typeof CHANNELS)[number]) => {
      let res: Answer;
      if (channel === 'POST') res = await call('/api/webhook-trigger/approval', { key, json: { approvalId, decision: 'approve' } });
      else if (channel === 'v1') res = await call(`/api/v1/approvals/${approvalId}/approve`, { key, json: {} });
      else if (channel === 'one-click') {
        const page = await call(`/api/webhook-trigger/approval/${approvalId}/approve?api_key=${encodeURIComponent(key)}`, {
          headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) chaos' },
        });
        const action = /<form method="post" action="([^"]+)"/.exec(page.text)?.[1]?.replace(/&amp;/g, '&');
        const hidden = /<input type="hidden" name="page" value="([^"]+)"/.exec(page.text)?.[1];
        if (!action || !hidden) throw new Error(`one-click page without its form: ${page.status} ${page.text.slice(0, 200)}`);
        res = await call(action, { form: { page: hidden }, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) chaos' } });
      } else {
        const page = await call(`/console/approvals/${approvalId}`, { cookie });
        const csrf = [...page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]);
        res = await call(`/console/approvals/${approvalId}`, { cookie, form: { ...Object.fromEntries(csrf), decision: 'approve' } });
      }
      if (res.status < 400) decisions.set(approvalId, (decisions.get(approvalId) ?? 0) + 1);
    };

    const started_: { kind: string; executionId: string }[] = [];
    const unit = async (i: number) => {
      const kind = KINDS[i % KINDS.length]!;
      const idem = `chaos-${started}-${i}`;
      const res =
        kind === 'webhook'
          ? await call(`/api/webhooks/${webhook.id}/trigger`, { key, json: { n: i }, idempotencyKey: idem })
          : await call(`/api/v1/workflows/${workflows[kind]}/runs`, { key, json: { variables: {} }, idempotencyKey: idem });
      const executionId = must(`start ${kind}`, res).executionId as string;
      started_.push({ kind, executionId });
      if (kind === 'approval') {
        const e = await until(executionId, (x) => x.status === 'WAITING_APPROVAL' && x.approvalId);
        await decide(e.approvalId, CHANNELS[Math.floor(i / KINDS.length) % CHANNELS.length]!);
      } else if (kind === 'callback') {
        await until(executionId, (x) => x.status === 'WAITING_CALLBACK' && listener.captured.has(executionId));
        const cb = listener.captured.get(executionId)!;
        const path = new URL(cb.url).pathname;
        // Reported twice, as a retrying reporter does: applied once.
        for (let n = 0; n < 2; n++) {
          const r = await call(path, { token: cb.token, json: { status: 'success', output: { n } }, final: () => true });
          if (r.status < 300) reports.set(executionId, (reports.get(executionId) ?? 0) + 1);
        }
      }
    };
    let next = 0;
    const errors: string[] = [];
    await Promise.all(
      Array.from({ length: opts.concurrency ?? 8 }, async () => {
        while (next < opts.runs) {
          const i = next++;
          await unit(i).catch((e: Error) => errors.push(e.message));
          if (i % 100 === 0) progress(`${i} of ${opts.runs} started (${Math.round((Date.now() - started) / 1000)} s)`);
        }
      }),
    );
    progress(`all ${opts.runs} started; settling`);
    const runs = await settle(call, key, workflows, opts.settleSeconds ?? 150, progress);
    const faults = must('health', await call('/api/health')).faults as Record<string, number>;
    // Each webhook run wrote its report (to S3, under s3.slowdown) once.
    const artifacts = new Map<string, number>();
    for (const s of started_.filter((x) => x.kind === 'webhook'))
      artifacts.set(s.executionId, must('artifacts', await call(`/api/v1/executions/${s.executionId}/artifacts`, { key })).items.length);
    const rows = await check({ runs, started: started_, decisions, reports, artifacts, listener, log, errors, target, opts });
    return { rows, faults, answers: log, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    await listener.stop();
  }
}

type Run = { executionId: string; status: string; workflowId: string; scheduleId?: string; scheduledAt?: string; events: any[] };

/** Wait until every run of the soak's workflows has ended (resuming the interrupted ones), then read each with its events. */
async function settle(
  call: ReturnType<typeof client>,
  key: string,
  workflows: Record<string, string>,
  seconds: number,
  progress: (l: string) => void,
) {
  const list = async () => {
    const all: any[] = [];
    for (const workflowId of Object.values(workflows)) {
      let cursor: string | null = null;
      do {
        const q: string = `workflowId=${workflowId}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = must('list', await call(`/api/v1/executions?${q}`, { key }));
        all.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
    }
    return all;
  };
  const deadline = Date.now() + seconds * 1000;
  let runs = await list();
  for (;;) {
    const open = runs.filter((r) => !['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(r.status));
    if (open.length === 0 || Date.now() > deadline) break;
    for (const r of open.filter((x) => x.status === 'INTERRUPTED'))
      await call(`/api/v1/executions/${r.executionId}/resume`, { key, json: {}, final: () => true });
    progress(
      `${open.length} runs not ended yet (${open
        .map((r) => r.status)
        .join(',')
        .slice(0, 120)})`,
    );
    await sleep(3000);
    runs = await list();
  }
  const out: Run[] = [];
  for (const r of runs) {
    const events: any[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = must('events', await call(`/api/v1/executions/${r.executionId}/events?${q}`, { key }));
      events.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    // The run as it is now (the listing is an index: it may lag behind the run's last write).
    const now = must('run', await call(`/api/v1/executions/${r.executionId}`, { key }));
    out.push({ ...r, status: now.status, events });
  }
  return out;
}

type CheckInput = {
  runs: Run[];
  started: { kind: string; executionId: string }[];
  decisions: Map<string, number>;
  reports: Map<string, number>;
  artifacts: Map<string, number>;
  listener: Awaited<ReturnType<typeof startListener>>;
  log: AnswerLog;
  errors: string[];
  target: ChaosTarget;
  opts: ChaosOptions;
};

async function check(c: CheckInput): Promise<Row[]> {
  const rows: Row[] = [];
  const row = (invariant: string, checked: number, bad: string[]) =>
    rows.push({ invariant, checked, held: bad.length === 0, detail: bad.length ? `${bad.length}: ${bad.slice(0, 3).join('; ')}` : 'held' });
  const byId = new Map(c.runs.map((r) => [r.executionId, r]));
  const count = (r: Run, type: string) => r.events.filter((e) => e.type === type).length;

  row('every unit of work was started (one run per request, retries included)', c.opts.runs, [
    ...c.errors,
    ...(new Set(c.started.map((s) => s.executionId)).size !== c.started.length ? ['a retried request started a second run'] : []),
  ]);
  const scheduled = c.runs.filter((r) => r.scheduleId);
  const ours = c.runs.filter((r) => !r.scheduleId);
  const extra = ours.filter((r) => !c.started.some((s) => s.executionId === r.executionId));
  row(
    'no run started that no request asked for',
    ours.length,
    extra.map((r) => `${r.executionId} (${r.status})`),
  );
  const terminal = c.runs.map((r) => {
    const ends = r.events.filter((e) => TERMINAL.has(e.type)).length;
    const seqs = r.events
      .map((e) => e.seq)
      .filter((s) => s !== undefined)
      .sort((a, b) => a - b);
    // docs/runs-and-events.md: a run waiting for an approval keeps the numbers after its
    // `approval.requested` (S) for the votes; what ends the wait is S + VOTE_ROOM. No other gap.
    const rooms = r.events.filter((e) => e.type === 'approval.requested').map((e) => e.seq as number);
    const inRoom = (a: number, b: number) => rooms.some((room) => room <= a && b === room + VOTE_ROOM);
    const gap = seqs.some((s, i) => i > 0 && s !== seqs[i - 1] + 1 && !(s > seqs[i - 1] && inRoom(seqs[i - 1], s)));
    return r.status !== 'SUCCEEDED' || ends !== 1 || gap
      ? `${r.executionId}: ${r.status}, ${ends} terminal events, seq ${gap ? 'with a gap or twice' : 'contiguous'}`
      : '';
  });
  row(
    "every run SUCCEEDED once: one terminal event, seq contiguous (but an approval's room for votes)",
    c.runs.length,
    terminal.filter(Boolean),
  );
  const approvals = c.started.filter((s) => s.kind === 'approval').map((s) => byId.get(s.executionId));
  row(
    'every approval decided once (POST, v1, one-click, console)',
    approvals.length,
    approvals.flatMap((r) =>
      r && count(r, 'approval.decided') === 1 ? [] : [`${r?.executionId}: ${r ? count(r, 'approval.decided') : 'missing'} decisions`],
    ),
  );
  const callbacks = c.started.filter((s) => s.kind === 'callback').map((s) => byId.get(s.executionId));
  row(
    'every callback report applied once (each reported twice)',
    callbacks.length,
    callbacks.flatMap((r) =>
      r && count(r, 'callback.reported') === 1 ? [] : [`${r?.executionId}: ${r ? count(r, 'callback.reported') : 'missing'} reports`],
    ),
  );
  const fires = new Map<string, number>();
  for (const r of scheduled) fires.set(`${r.scheduleId}@${r.scheduledAt}`, (fires.get(`${r.scheduleId}@${r.scheduledAt}`) ?? 0) + 1);
  row(
    'every schedule fire started at most one run',
    fires.size,
    [...fires].filter(([, n]) => n > 1).map(([f, n]) => `${f}: ${n} runs`),
  );
  // docs/runs-and-events.md: a written http_request is never repeated; one under way when its worker died runs again when the run is resumed.
  const effects: string[] = [];
  let calls = 0;
  for (const s of c.started.filter((x) => x.kind === 'webhook' || x.kind === 'for_each')) {
    const r = byId.get(s.executionId);
    const paths = s.kind === 'webhook' ? [`/hit/${s.executionId}`] : [1, 2, 3].map((n) => `/hit/${s.executionId}/${n}`);
    const allowed = 1 + (r ? count(r, 'execution.resumed') : 0);
    for (const p of paths) {
      calls++;
      const n = c.listener.hits.get(p) ?? 0;
      if (n > allowed || (r?.status === 'SUCCEEDED' && n === 0)) effects.push(`${p}: ${n} requests, ${allowed - 1} resumes`);
    }
  }
  row(
    'every artifact stored once (the webhook runs’ reports)',
    c.artifacts.size,
    [...c.artifacts].filter(([, n]) => n !== 1).map(([id, n]) => `${id}: ${n} artifacts`),
  );
  row('every http_request effect at most once per attempt the run made (1 + its resumes)', calls, effects);
  row(
    `no 5xx but a 503 with Retry-After (503s: ${c.log.unavailable503}; API Gateway's 500 for a crashed or timed-out function: ${c.log.gateway5xx})`,
    Object.values(c.log.byStatus).reduce((a, b) => a + b, 0),
    c.log.other5xx.map((x) => `${x.route} ${x.status} ${x.body}`),
  );
  const dead = (await c.target.deadLetters?.()) ?? {};
  const logs = c.target.logs?.() ?? '';
  const unexplained: string[] = [];
  let deadCount = 0;
  for (const [queue, bodies] of Object.entries(dead))
    for (const body of bodies) {
      deadCount++;
      // A run's or a delivery's id, or (an asynchronous invocation's on-failure record) its request id.
      const ids = [
        ...body.matchAll(/\b(ex|sch|dl|ap)_[0-9A-Za-z]{10,}|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g),
      ].map((m) => m[0]);
      if (!ids.some((id) => logs.includes(id))) unexplained.push(`${queue}: ${body.slice(0, 160)}`);
    }
  row(`nothing in a DLQ without a reason in the log (${Object.keys(dead).join(', ') || 'no queue given'})`, deadCount, unexplained);
  return rows;
}
