// `npm run bench -- heat`: the heat model (docs/performance.md "Heat: per-key throughput at scale"):
// what the measured works put on each key and item, and on each table and index, projected to the
// issue's four targets, and gated.
import { readFileSync } from 'node:fs';
import { capacitySettings, DYNAMODB, RUNS_BATCH_SIZE as WORKER_BATCH } from '../../infra/settings.ts';
import { AUDIT_SHARDS } from '../../shared/db/entities/audit.ts';
import { ACTIVE_SHARDS } from '../../shared/db/entities/execution-index.ts';
import { INBOUND_LOG_SIZE } from '../../shared/db/entities/inbound-request.ts';
import { REFUSALS_PER_FLUSH } from '../../shared/domain/inbound-record.ts';
import { countersFor } from '../../shared/db/entities/rate-counters.ts';
import { SWEEP_SHARDS } from '../../shared/db/sweep-shards.ts';
import { listShards } from '../../shared/db/shards.ts';
import {
  type Capacity,
  type CapacityRow,
  capacityGate,
  GATE,
  heat,
  type Part,
  project,
  type Requirement,
  requirementText,
  type Row,
  type Scenario,
  totals,
} from './heat-model.ts';
import type { Measurements, PerUnit } from './heat-scenarios.ts';

/**
 * The plans' limits while the heat model measures (`RATE_LIMITS`): an account at (a) or (b) needs a limit
 * above its load, (b) 3,000 metered requests a second (the trigger, the approval, the callback report
 * of 1,000 runs/s); the model gives the team plan twice that, 360,000 a minute (6,000/s), so its rate
 * window is spread over 12 counters (`countersFor`): the account item and 11 `RATE#<account>#<counter>`.
 */
export const HEAT_RATE_LIMITS = { pro: 2, team: 360_000, enterprise: 1_000_000 };
/** The counters of a team account in the model, other than its account item. */
export const HEAT_COUNTERS = countersFor(HEAT_RATE_LIMITS.team) - 1;
/**
 * An HTTP function writes each item it counted (a key's usage: `shared/db/counters.ts`) at most once
 * a second per instance, whatever the requests. How many instances: by Little's law, 1,000 requests a
 * second of under 100 ms each keep at most 100 busy; the model takes 100 for each HTTP function.
 */
export const HTTP_INSTANCES = 100;

/** Reminders in (d): each pending approval reminds its reviewers once an hour. */
export const REMINDER_EVERY_SECONDS = 3600;
/** The sweep runs once a minute (EventBridge; infra/constructs). */
export const SWEEP_EVERY_SECONDS = 60;

const part = (work: string, perSecond: number, m: PerUnit): Part => ({ work, perSecond, ...m });

/**
 * The runs worker's flushes for `runsPerSecond` runs over `accounts` accounts: each batch writes an
 * account's counted items once (`shared/db/counters.ts`), for all its messages in the batch. In full
 * batches (a busy queue's; `runsBatchingWindow` waits for them) an account has WORKER_BATCH /
 * min(WORKER_BATCH, accounts) messages in each: `flush`, measured as a flush per message, is divided by that.
 */
function workerFlushPart(runsPerSecond: number, accounts: number, flush: PerUnit): Part {
  const inBatch = Math.min(WORKER_BATCH, accounts);
  return part(
    `runs worker: each batch's flush of its counts (batches of ${WORKER_BATCH}, ${inBatch} account${inBatch > 1 ? 's' : ''} in each)`,
    (runsPerSecond * inBatch) / WORKER_BATCH,
    flush,
  );
}

/**
 * An HTTP function's flushes: each of `HTTP_INSTANCES` instances writes, once a second, the items it
 * counted for the accounts it served in that second, at most min(accounts, its requests a second);
 * `flush` is what one account's flush writes.
 */
function httpFlushPart(fn: string, requestsPerSecond: number, accounts: number, flush: PerUnit): Part {
  const served = Math.min(accounts, requestsPerSecond / HTTP_INSTANCES);
  return part(
    `${fn}: each instance's flush of its counts, once a second (${HTTP_INSTANCES} instances, ${served} account${served > 1 ? 's' : ''} each)`,
    HTTP_INSTANCES * served,
    flush,
  );
}

/**
 * Distinct values of each id at a target: `accounts` accounts with one admin, one webhook, one key and
 * one workflow each; ids new with each unit of work (runs, events, approvals, callbacks, audit records)
 * at `perSecond`, the units of work a second (a run's units taken as landing within one second);
 * times as one value (a window, a due time: conservative); a listing key's shards `LIST_SHARDS`, the
 * deployment-wide keys' their own (`SHARDS`).
 */
const counts = (accounts: number, perSecond: number, more: Record<string, number> = {}) => ({
  account: accounts,
  user: accounts,
  webhook: accounts,
  key: accounts,
  workflow: accounts,
  run: perSecond,
  event: perSecond,
  approval: perSecond,
  callback: perSecond,
  audit: perSecond,
  delivery: perSecond,
  time: 1,
  shard: listShards(),
  counter: HEAT_COUNTERS,
  ...more,
});

/** Shards of the deployment-wide keys, by the start of their family (`Scenario.shards`). */
export const SHARDS: Record<string, number> = {
  'RUN#ACTIVE#': ACTIVE_SHARDS,
  'APPROVAL#NUDGE#': SWEEP_SHARDS,
  'APPROVAL#EXPIRY#': SWEEP_SHARDS,
  'CALLBACK#DEADLINE#': SWEEP_SHARDS,
  'SCHEDULES#': SWEEP_SHARDS,
  // The approvals' status listing: max(16, LIST_SHARDS) (shared/db/entities/approval.ts).
  'ACC#<account>#AP#': Math.max(16, listShards()),
  // The account's audit log and each actor's (shared/db/entities/audit.ts).
  'AUDIT#': AUDIT_SHARDS,
  'AUDITBY#': AUDIT_SHARDS,
  // A webhook's inbound log: a ring of slots, a partition each (shared/db/entities/inbound-request.ts).
  'WHREQ#': INBOUND_LOG_SIZE,
};

const prewarm = (index: string, write: number): Requirement => ({ kind: 'warm', index, op: 'write', atLeast: write });
const writeQuota = (write: number): Requirement => ({ kind: 'quota', op: 'write', atLeast: write });

/**
 * The issue's four targets (issue 32, item 1), each from the measured works, and what each needs
 * beyond a default deployment (issue 42; docs/deploying.md "Quotas"): the totals with a quarter of
 * headroom, rounded up to a thousand (as the default warm throughput is sized for (a), which needs
 * nothing more).
 */
export function heatScenarios(m: Measurements): Scenario[] {
  const fires = 100_000 / SWEEP_EVERY_SECONDS;
  // What the trigger counts (the runs' starts in their account's hour), written per instance.
  const trigger = (requestsPerSecond: number, accounts: number) => {
    const flush = m.httpFlush['webhook trigger'];
    return flush ? [httpFlushPart('webhook trigger', requestsPerSecond, accounts, flush)] : [];
  };
  return (
    [
      {
        name: '(a) one account, 1,000 runs/s of the one-step webhook run',
        parts: [part('one-step webhook run', 1000, m.oneStep), workerFlushPart(1000, 1, m.workerFlush.oneStep), ...trigger(1000, 1)],
        counts: counts(1, 1000),
        requires: [],
      },
      {
        name: '(b) one account, 1,000 runs/s of a 10-step run with an http_request, an approval and a callback',
        parts: [
          part('ten-step run: http_request, approval (deadline, reminders), callback', 1000, m.tenStep),
          workerFlushPart(1000, 1, m.workerFlush.tenStep),
          // What the trigger and the approvals route count (the deciding key's usage), written per instance.
          ...Object.entries(m.httpFlush).map(([fn, flush]) => httpFlushPart(fn, 1000, 1, flush)),
        ],
        counts: counts(1, 1000),
        // Table 77,509 WRU/s, GSI1 5,000, GSI2 20,000 (87,509 before a write packed its steps' events into one item).
        requires: [prewarm('table', 97_000), prewarm('GSI1', 7_000), prewarm('GSI2', 25_000), writeQuota(97_000)],
      },
      {
        name: '(c) 1,000 accounts at 10 runs/s each',
        parts: [
          part('one-step webhook run, batches of several accounts', 10_000, m.manyAccounts),
          workerFlushPart(10_000, 1000, m.workerFlush.manyAccounts),
          ...trigger(10_000, 1000),
        ],
        counts: counts(1000, 10_000),
        // Table 120,000 WRU/s, GSI1 10,000, GSI2 40,000, GSI3 10,000. GSI2 is at the table-level quota, not
        // over it (the gate's rule): the table's increase is what (c) needs of the quota.
        requires: [
          prewarm('table', 150_000),
          prewarm('GSI1', 13_000),
          prewarm('GSI2', 50_000),
          prewarm('GSI3', 13_000),
          writeQuota(150_000),
        ],
      },
      {
        name: '(d) 1,000,000 pending approvals reminded hourly, 100,000 schedules firing each minute',
        parts: [
          part('reminder', 1_000_000 / REMINDER_EVERY_SECONDS, m.reminder),
          part('schedule fire and its one-step run', fires, m.fire),
          workerFlushPart(fires, 1000, m.workerFlush.fire),
          part('drift repair, per schedule per pass', fires, m.drift),
          part('sweep pass with nothing due', 1 / SWEEP_EVERY_SECONDS, m.pass),
        ],
        // 1,000 accounts; each schedule on a workflow of its own; the approvals all distinct.
        counts: counts(1000, fires, { workflow: 100_000, schedule: 100_000, approval: 1_000_000 }),
        // Table 32,222 WRU/s, GSI2 6,667: averaged over the minute, which the schedules' window spreads their fires over.
        // The table's pre-warm (41,000) is over the default quota, which AWS pre-warms up to and no further.
        requires: [prewarm('table', 41_000), prewarm('GSI2', 9_000), writeQuota(41_000)],
      },
      {
        name: '(e) a flood of refusals: 1,000 requests/s to one webhook with a wrong key, from 1,000 addresses, bodies of 16 KiB',
        parts: [
          part('refused trigger (its address counted)', 1000, m.refused.request),
          httpFlushPart('refused trigger', 1000, 1, m.refused.countsFlush),
          // Each instance writes the newest refusals it holds at most once a second: its log's head and a slot each.
          part(
            `refused trigger: each instance's write of its inbound log, once a second (${HTTP_INSTANCES} instances, ${REFUSALS_PER_FLUSH} refusals each)`,
            HTTP_INSTANCES,
            m.refused.log,
          ),
        ],
        counts: counts(1, 1000, { address: 1000 }),
        requires: [],
      },
    ] as Scenario[]
  ).map((s) => ({ ...s, shards: SHARDS }));
}

const round = (x: number) => (x >= 10 ? Math.round(x) : Math.round(x * 100) / 100);
const view = (r: Row) => ({
  index: r.index,
  key: r.key,
  ...(r.item !== undefined ? { item: r.item } : {}),
  values: round(r.values),
  'WCU/s': round(r.wcu),
  'RCU/s': round(r.rcu),
  gate: r.hot ? `OVER ×${round(heat(r))}` : '',
});

const named = (r: Row) =>
  `${r.index} ${r.key}${r.item ? ` / ${r.item}` : ''}: ${round(r.wcu)} WCU/s, ${round(r.rcu)} RCU/s${r.hot ? ' (over)' : ''}`;

/** A default deployment's capacity: the default warm throughput of each part, the default table-level quota. */
export const defaultCapacity = (): Capacity => ({ warm: capacitySettings({}).warm, quota: { ...DYNAMODB.tableQuota } });

/** docs/deploying.md's "Quotas" section, where each scenario's requirements must be named. */
export function quotasSection(page = readFileSync(new URL('../../docs/deploying.md', import.meta.url), 'utf8')): string {
  const start = /^## Quotas$/m.exec(page)?.index;
  if (start === undefined) return '';
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
}

const capacityView = (r: CapacityRow) => ({
  index: r.index,
  units: r.op === 'write' ? 'WRU/s' : 'RRU/s',
  total: round(r.total),
  warm: r.warm,
  quota: r.quota,
  'over it: needs at least': r.needs.map(requirementText).join('; '),
});

/**
 * Every scenario projected: key and item rows, hottest first; the families over a gate, and the five
 * hottest; each table's and index's totals, gated against `capacity` (a default deployment's) with
 * the requirements the scenario declares, named in `documented` (docs/deploying.md "Quotas").
 */
export function heatReport(m: Measurements, capacity: Capacity = defaultCapacity(), documented: string = quotasSection()) {
  return heatScenarios(m).map((s) => {
    const { keys, items } = project(s);
    const all = [...keys, ...items].sort((x, y) => heat(y) - heat(x));
    const parts = totals(keys);
    const gate = capacityGate(s, parts, capacity, documented);
    return {
      scenario: s.name,
      works: s.parts.map((p) => ({ work: p.work, perSecond: round(p.perSecond) })),
      keys: keys.map(view),
      items: items.map(view),
      over: all.filter((r) => r.hot).map(named),
      hottest: all.slice(0, 5).map(named),
      totals: parts.map((t) => ({ index: t.index, 'WRU/s': round(t.wcu), 'RRU/s': round(t.rcu) })),
      capacity: gate.rows.map(capacityView),
      requires: (s.requires ?? []).map(requirementText),
      failures: gate.failures,
    };
  });
}

/** The part: measured on the emulators (`measureHeat`), printed, and returned for bench.json. */
export async function heatPart() {
  const { measureHeat } = await import('./heat-scenarios.ts');
  const measured = await measureHeat();
  const report = heatReport(measured);
  console.log(`\nHeat: units a second on each value of a key or item family at the targets (gates: ${GATE.wcu} WCU/s, ${GATE.rcu} RCU/s)`);
  for (const s of report) {
    console.log(`\n${s.scenario}`);
    console.table(s.keys.slice(0, 12));
    console.table(s.items.slice(0, 8));
    console.log(`over a gate: ${s.over.length ? s.over.join('; ') : 'none'}`);
    console.log(`hottest: ${s.hottest.join('; ')}`);
    console.log('units a second on each table and index, against its warm throughput and the table-level quota:');
    console.table(s.capacity);
    console.log(`requires: ${s.requires.length ? s.requires.join('; ') : 'nothing beyond a default deployment'}`);
  }
  const failures = report.flatMap((s) => s.failures);
  console.log(
    `\nCapacity gate: ${failures.length ? `FAILED\n  ${failures.join('\n  ')}` : 'every total within its capacity or its declared, documented requirement'}`,
  );
  if (failures.length) process.exitCode = 1;
  // The units per unit of work as measured, so that every projected figure can be checked by hand.
  return { gate: GATE, capacity: defaultCapacity(), scenarios: report, measured };
}
