import { beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_SHARDS } from '../../shared/db/entities/execution-index.ts';
import { INBOUND_LOG_SIZE } from '../../shared/db/entities/inbound-request.ts';
import { listShards } from '../../shared/db/shards.ts';
import { SWEEP_SHARDS } from '../../shared/db/sweep-shards.ts';
import { useOwnQueues } from '../support/engine.ts';
import { DEFAULT_WARM_THROUGHPUT, WARM_TARGET, warmFor } from '../../infra/settings.ts';
import { capacityGate, GATE, project, type Requirement, type Row, type Scenario, totals } from './heat-model.ts';
import { instrumentHeat } from './heat-record.ts';
import { defaultCapacity, HEAT_COUNTERS, HTTP_INSTANCES, heatReport, heatScenarios, quotasSection } from './heat.ts';
import { type Measurements, measureHeat } from './heat-scenarios.ts';

/**
 * The heat model on today's keys (issue 32, item 1; docs/performance.md "Heat: per-key throughput at
 * scale"), measured on the emulators as `npm run bench -- heat` measures it. Counts only, never times.
 *
 * The gate (no partition key value and no item above 500 write or 1,500 read units a second in any of
 * (a)–(d)) does not hold today: these tests record which families are over it, as measured, so that
 * the redesign of the keys (item 2) changes them, ending with every list below empty.
 */

let m: Measurements;
let projected: (Scenario & { keys: Row[]; items: Row[] })[];
beforeAll(async () => {
  await useOwnQueues();
  instrumentHeat();
  m = await measureHeat();
  projected = heatScenarios(m).map((s) => ({ ...s, ...project(s) }));
}, 300_000);

const scenario = (letter: string) => {
  const s = projected.find((p) => p.name.startsWith(`(${letter})`));
  if (!s) throw new Error(`no scenario (${letter})`);
  return s;
};
const name = (r: Row) => `${r.index} ${r.key}${r.item !== undefined ? ` / ${r.item}` : ''}`;
const over = (rows: Row[]) =>
  rows
    .filter((r) => r.wcu > GATE.wcu || r.rcu > GATE.rcu)
    .map(name)
    .sort();
const find = (rows: Row[], index: string, key: string, item?: string) => {
  const r = rows.find((x) => x.index === index && x.key === key && x.item === item);
  if (!r) throw new Error(`no ${index} ${key} ${item ?? ''}`);
  return r;
};

/**
 * The keys over a gate, per scenario, as the model finds them: none. Spread since the first model:
 * runs (`EX#<account>#<run>`, their listings on LIST_SHARDS shards, the active index on 128),
 * idempotency keys, the rate window (rate counters), a busy key (read, not written), approvals and
 * callbacks (by themselves, their listing on 16 shards) and the sweeps' keys (16 shards). An empty
 * list is the gate holding for that scenario.
 */
const TODAY = {
  a: { keys: [], items: [] },
  b: { keys: [], items: [] },
  c: { keys: [], items: [] },
  d: { keys: [], items: [] },
  e: { keys: [], items: [] },
};

describe('the heat model on the emulators', () => {
  it('measures every work it projects: runs, reminders, fires, the drift repair and a sweep pass each touch DynamoDB', () => {
    const { httpFlush, workerFlush, refused, ...works } = m;
    for (const [part, measured] of Object.entries(refused)) expect(measured.keys.length, `refused ${part}`).toBeGreaterThan(0);
    for (const [work, measured] of Object.entries(works)) expect(measured.keys.length, work).toBeGreaterThan(0);
    // The runs worker's flushes, apart from the runs: one write per item and message, whatever the
    // batches were (`workerFlushes`). A one-step run counts its trigger in the webhook's stats and the
    // key's use, and its end in the account's hour; a fire's run only its end (its start is the fire's).
    const written = (flush: (typeof workerFlush)['oneStep']) =>
      Object.fromEntries(flush.items.map((l) => [`${l.key} / ${l.item}`, Math.round(l.wcu * 100) / 100]));
    for (const work of ['oneStep', 'manyAccounts'] as const)
      expect(Object.keys(written(workerFlush[work])).sort(), work).toEqual([
        'KEY#<key> / KEY',
        'RUNHOURS#<account> / H#<time>',
        'WH#<webhook> / STATS',
      ]);
    expect(written(workerFlush.fire)).toEqual({ 'RUNHOURS#<account> / H#<time>': 1 });
    for (const flush of Object.values(workerFlush)) expect(flush.keys.every((l) => l.rcu === 0)).toBe(true);
    // The approvals route counts the deciding key's use, written by its instance's flush; the trigger its
    // runs' starts in their account's hour (the overview's counts); the callbacks route counts nothing of an
    // accepted request (the runs worker counts a trigger's).
    expect(Object.keys(httpFlush).sort()).toEqual(['approvals route', 'webhook trigger']);
  });

  it('the report names the hottest keys of each scenario, hottest first, those over a gate marked (none now)', () => {
    const report = heatReport(m);
    expect(report.map((r) => r.hottest.length)).toEqual([5, 5, 5, 5, 5]);
    for (const r of report) {
      for (const line of r.hottest) expect(line).toMatch(/^\S+ \S.*: [\d.]+ WCU\/s, [\d.]+ RCU\/s$/);
      // By the share of the nearer gate.
      const share = r.hottest.map((l) => {
        const [, w, c] = /: ([\d.]+) WCU\/s, ([\d.]+) RCU/.exec(l) ?? [];
        return Math.max(Number(w) / GATE.wcu, Number(c) / GATE.rcu);
      });
      expect(share).toEqual([...share].sort((x, y) => y - x));
      expect(share[0]).toBeLessThanOrEqual(1);
    }
    for (const r of report) expect(r.over.length).toBe(r.keys.filter((k) => k.gate).length + r.items.filter((k) => k.gate).length);
  });

  it.each(['a', 'b', 'c', 'd', 'e'] as const)('(%s): the keys and items over a gate today', (letter) => {
    const s = scenario(letter);
    expect(over(s.keys)).toEqual(TODAY[letter].keys);
    expect(over(s.items)).toEqual(TODAY[letter].items);
  });

  it("(a): each run's writes land on its own key, its listings on LIST_SHARDS shards; its metering spreads over its 12 rate counters", () => {
    const { keys, items } = scenario('a');
    const run = find(keys, 'table', 'EX#<account>#<run>');
    expect(run.values).toBe(1000);
    expect(run.wcu).toBeLessThan(GATE.wcu / 10);
    for (const [index, key] of [
      ['GSI3', 'ACC#<account>#EX#<shard>'],
      ['GSI1', 'ACC#<account>#WF#<workflow>#<shard>'],
    ] as const) {
      const listing = find(keys, index, key);
      expect(listing.values).toBe(listShards());
      expect(listing.wcu).toBeLessThanOrEqual(GATE.wcu);
    }
    // What is left under the account's partition: its own item.
    const account = find(keys, 'table', 'ACC#<account>');
    expect(account.values).toBe(1);
    expect(account.wcu).toBe(find(items, 'table', 'ACC#<account>', 'ACCOUNT').wcu);
    // One write a metered request (two for a counter's first of a minute), a twelfth on each counter.
    const item = find(items, 'table', 'ACC#<account>', 'ACCOUNT');
    const counters = find(items, 'table', 'RATE#<account>#<counter>', 'RATE');
    expect(counters.values).toBe(HEAT_COUNTERS);
    expect(item.totalWcu + counters.totalWcu).toBeGreaterThanOrEqual(1000);
    for (const r of [item, counters]) expect(r.wcu).toBeLessThan(GATE.wcu / 2);
    // Keyed by the run, the event log spreads too: each run's own partition takes a few units a second.
    const events = find(keys, 'table', 'ACC#<account>#EX#<run>');
    expect(events.values).toBe(1000);
    expect(events.wcu).toBeLessThan(GATE.wcu / 10);
  });

  it('(c): the same runs over 1,000 accounts pass every gate; the active index, one key for the deployment, holds on its 128 shards', () => {
    const { keys, items } = scenario('c');
    expect(over(keys)).toEqual([]);
    expect(over(items)).toEqual([]);
    expect(find(keys, 'table', 'ACC#<account>').values).toBe(1000);
    const active = find(keys, 'GSI2', 'RUN#ACTIVE#webhook#<shard>');
    expect(active.values).toBe(ACTIVE_SHARDS);
    expect(active.wcu).toBeLessThan(GATE.wcu);
  });

  it("(b): approvals and callbacks on their own keys, the approvals' status listing and the deadlines and due reminders over their shards, each under the gate", () => {
    const { keys } = scenario('b');
    for (const status of ['PENDING', 'APPROVED']) {
      const row = find(keys, 'GSI1', `ACC#<account>#AP#${status}#<shard>`);
      expect(row.values, status).toBe(Math.max(16, listShards()));
      expect(row.wcu, status).toBeLessThan(GATE.wcu);
    }
    expect(find(keys, 'table', 'AP#<account>#<approval>')).toMatchObject({ values: 1000 });
    expect(find(keys, 'table', 'CB#<account>#<callback>')).toMatchObject({ values: 1000 });
    for (const [index, key] of [
      ['GSI2', 'APPROVAL#EXPIRY#<shard>'],
      ['GSI2', 'CALLBACK#DEADLINE#<shard>'],
      ['table', 'APPROVAL#NUDGE#<shard>'],
    ] as const) {
      const row = find(keys, index, key);
      expect(row.values, key).toBe(SWEEP_SHARDS);
      expect(row.wcu, key).toBeGreaterThan(0);
      expect(row.wcu, key).toBeLessThan(GATE.wcu);
    }
  });

  it('(d): every reminder moves its due item within one of the sweep shards; the drift repair reads every schedule from the shards of SCHEDULES', () => {
    const { keys } = scenario('d');
    const nudges = find(keys, 'table', 'APPROVAL#NUDGE#<shard>');
    expect(nudges.values).toBe(SWEEP_SHARDS);
    expect(nudges.wcu).toBeLessThan(GATE.wcu / 4);
    // The unsharded partitions of before the upgrade: read once a pass (empty once migrated), never written.
    expect(find(keys, 'table', 'APPROVAL#NUDGE')).toMatchObject({ values: 1, wcu: 0 });
    expect(find(keys, 'GSI2', 'SCHEDULES')).toMatchObject({ values: 1, wcu: 0 });
    // Averaged over the minute between passes (100 schedules over 16 shards read about what the empty
    // shards do: a Query's one-unit minimum); a pass over 100,000 reads 1/16 of them from each.
    const schedules = find(keys, 'GSI2', 'SCHEDULES#<shard>');
    expect(schedules).toMatchObject({ values: SWEEP_SHARDS, wcu: 0 });
    expect(schedules.rcu).toBeLessThan(GATE.rcu / 100);
  });
});

describe('the totals of each table and index (issue 42, item 1; docs/deploying.md "Quotas")', () => {
  /** Write and read units a second per part, rounded to a unit. */
  const summed = (letter: string) =>
    Object.fromEntries(totals(scenario(letter).keys).map((t) => [t.index, [Math.round(t.wcu), Math.round(t.rcu)]]));

  it("(e): a flood of refusals writes, per instance and second, the log's head and its newest refusals within 32 KiB (one of 16 KiB), over the ring's 50 partitions", () => {
    const s = scenario('e');
    const log = m.refused.log.items.map((l) => [l.key, l.item, l.wcu]);
    // A slot of a 16 KiB body and its headers is 17 units: a second would pass the bytes a flush writes.
    expect(log).toEqual([
      ['WH#<webhook>', 'INBOUND', 1],
      ['WHREQ#<webhook>#<shard>', 'REQ', 17],
    ]);
    const ring = find(s.items, 'table', 'WHREQ#<webhook>#<shard>', 'REQ');
    expect([ring.values, ring.wcu]).toEqual([INBOUND_LOG_SIZE, (HTTP_INSTANCES * 17) / INBOUND_LOG_SIZE]);
    // The address's failed-authentication counter: a write a refusal, on a key of its own.
    expect(find(s.items, 'table', 'AUTHFAIL#<address>', 'WINDOW#<time>')).toMatchObject({ values: 1000, wcu: 1 });
  });

  it('sums each scenario per table and index, as docs/deploying.md gives them', () => {
    expect(summed('a')).toEqual({ table: [8400, 0], GSI1: [1000, 0], GSI2: [4000, 0], GSI3: [1000, 0] });
    expect(summed('b')).toEqual({ table: [77_509, 6700], GSI1: [5000, 0], GSI2: [20_000, 0], GSI3: [1000, 0] });
    expect(summed('c')).toEqual({ table: [120_000, 0], GSI1: [10_000, 0], GSI2: [40_000, 0], GSI3: [10_000, 0] });
    // (d)'s reads of the table within 1 %: a fresh-clone CI measured 8,861 once against 8,878 (a unit and a half
    // fewer in one of its measured works; not pinned down: a read is sized by its item in 4 KB units, so an item
    // near a boundary reads a unit more or less). Its writes and every other total are exact.
    const { table, ...indexes } = summed('d');
    expect(indexes).toEqual({ GSI1: [1667, 0], GSI2: [6667, 5], GSI3: [1667, 0] });
    expect(table?.[0]).toBe(32_222);
    expect(Math.abs((table?.[1] ?? 0) - 8878)).toBeLessThanOrEqual(89);
    expect(summed('e')).toEqual({ table: [2900, 0] });
  });

  it("the default warm throughput is (a)'s totals with a quarter of headroom: the writes a run makes, as infra/settings.ts states them", () => {
    const a = totals(scenario('a').keys);
    for (const t of a) {
      expect(t.wcu / WARM_TARGET.runsPerSecond, t.index).toBeCloseTo(WARM_TARGET.writesPerRun[t.index as 'table'], 6);
      expect(DEFAULT_WARM_THROUGHPUT[t.index]?.write, t.index).toBe(warmFor(t.wcu, 4000));
    }
  });

  it('the gate holds: (a) and (e) need nothing beyond a default deployment; (b)-(d) declare what they need and docs/deploying.md names it', () => {
    const report = heatReport(m);
    expect(report.map((r) => r.failures)).toEqual([[], [], [], [], []]);
    expect([report[0]?.requires, report[4]?.requires]).toEqual([[], []]);
    for (const r of report.slice(1, 4)) expect(r.requires.length, r.scenario).toBeGreaterThan(0);
    expect(report[2]?.requires).toEqual([
      'pre-warm table writes to 150,000 WRU/s',
      'pre-warm GSI1 writes to 13,000 WRU/s',
      'pre-warm GSI2 writes to 50,000 WRU/s',
      'pre-warm GSI3 writes to 13,000 WRU/s',
      'table-level write quota 150,000 WRU/s',
    ]);
  });

  it.each(['a', 'b', 'c', 'd', 'e'] as const)(
    '(%s) declares what its totals need and no more: each part over its default warm throughput pre-warmed to warmFor(its total), the quota raised to warmFor(the largest total) when that is over it',
    (letter) => {
      const s = scenario(letter);
      const parts = totals(s.keys);
      const capacity = defaultCapacity();
      const expected: Requirement[] = parts
        .filter((t) => t.wcu > (capacity.warm[t.index]?.write ?? 0))
        .map((t) => ({ kind: 'warm', index: t.index, op: 'write', atLeast: warmFor(t.wcu, 0) }));
      // The quota when the largest total or its pre-warm is over it: AWS pre-warms up to the quota only.
      const largest = warmFor(Math.max(...parts.map((t) => t.wcu)), 0);
      if (largest > capacity.quota.write) expected.push({ kind: 'quota', op: 'write', atLeast: largest });
      // No read total is over its warm throughput (12,000) in any target: nothing to declare for reads.
      for (const t of parts) expect(t.rcu, `${letter} ${t.index}`).toBeLessThanOrEqual(capacity.warm[t.index]?.read ?? 0);
      expect(s.requires ?? []).toEqual(expected);
    },
  );

  it('the gate fails a total over its capacity that the scenario does not declare, and a requirement the docs do not name', () => {
    const c = scenario('c');
    const undeclared = capacityGate({ name: c.name }, totals(c.keys), defaultCapacity(), quotasSection());
    expect(undeclared.failures).toEqual([
      expect.stringMatching(
        /^\(c\) table: 120,000 WRU\/s is over its warm throughput \(11,000 WRU\/s\): it needs pre-warm table writes to 120,000 WRU\/s/,
      ),
      expect.stringMatching(
        /^\(c\) table: 120,000 WRU\/s is over the table-level quota \(40,000 WRU\/s\): it needs table-level write quota 120,000/,
      ),
      expect.stringMatching(/^\(c\) GSI1: 10,000 WRU\/s is over its warm throughput \(4,000 WRU\/s\)/),
      // At the quota (40,000), not over it: no increase of its own.
      expect.stringMatching(/^\(c\) GSI2: 40,000 WRU\/s is over its warm throughput \(5,000 WRU\/s\)/),
      expect.stringMatching(/^\(c\) GSI3: 10,000 WRU\/s is over its warm throughput/),
    ]);
    const undocumented = capacityGate(c, totals(c.keys), defaultCapacity(), quotasSection('## Quotas\n| (c) | nothing |\n'));
    expect(undocumented.failures).toHaveLength(c.requires?.length ?? 0);
    expect(undocumented.failures[0]).toMatch(
      /\(c\) requires pre-warm table writes to 150,000 WRU\/s, which docs\/deploying.md "Quotas" does not name/,
    );
  });
});
