import { describe, expect, it } from 'vitest';
import {
  type Capacity,
  capacityGate,
  difference,
  family,
  GATE,
  heat,
  keyFamily,
  perUnit,
  placeholders,
  project,
  requirementText,
  shardsOf,
  totals,
  valuesOf,
} from './heat-model.ts';
import type { Access } from './heat-record.ts';
import { readFileSync } from 'node:fs';
import { defaultCapacity, heatScenarios, quotasSection, REMINDER_EVERY_SECONDS, SWEEP_EVERY_SECONDS } from './heat.ts';
import type { Measurements } from './heat-scenarios.ts';
import { type Reread, queryPartition, readParts, readUnits } from './read-units.ts';
import { writeParts } from './write-units.ts';

/**
 * The heat model's arithmetic (docs/performance.md "Heat: per-key throughput at scale"), without the
 * emulators: sizing rules, key families, units per unit of work, projection and gates.
 */

const ulid = (c: string) => `01j${c.repeat(23)}`;
const [acc, run, ap, sch, key] = [`acc_${ulid('a')}`, `ex_${ulid('b')}`, `ap_${ulid('c')}`, `sch_${ulid('d')}`, ulid('e')];

describe('key families', () => {
  it.each([
    [`ACC#${acc}`, 'ACC#<account>'],
    [`ACC#${acc}#EX#${run}`, 'ACC#<account>#EX#<run>'],
    [`SCH#${sch}`, 'SCH#<schedule>'],
    [`IDEM#SCH#${sch}#1712345678000`, 'IDEM#SCH#<schedule>#<time>'],
    [`KEY#${key}`, 'KEY#<key>'],
    [`001712345678901#${acc}#${ap}`, '<time>#<account>#<approval>'],
    [`L#001712345678901#${run}`, 'L#<time>#<run>'],
    ['RUN#ACTIVE#webhook#3', 'RUN#ACTIVE#webhook#<shard>'],
    ['APPROVAL#NUDGE', 'APPROVAL#NUDGE'],
    ['ACCOUNT', 'ACCOUNT'],
    // An account's runs per hour (run-hours.ts), and an audit record's time.
    ['H#2026-12-02T14', 'H#<time>'],
    [`2026-12-02T14:03:59.123Z#${acc}`, '<time>#<account>'],
  ])('%s is in the family %s', (value, f) => {
    expect(family(value)).toBe(f);
  });

  it('an id is replaced whole: a schedule id is not read as a channel id inside it', () => {
    expect(placeholders(family(`ACC#${acc}#WFSCH#wf_${ulid('f')}`))).toEqual(['account', 'workflow']);
    expect(family(`SCH#${sch}`)).not.toContain('<channel>');
  });
});

describe('sizing rules', () => {
  it('reads: one unit per 4 KB rounded up, at least one; eventually consistent half; transactional double', () => {
    expect(readUnits(0, { consistent: true })).toBe(1);
    expect(readUnits(4096, { consistent: true })).toBe(1);
    expect(readUnits(4097, { consistent: true })).toBe(2);
    expect(readUnits(4097, { consistent: false })).toBe(1);
    expect(readUnits(100, { consistent: false })).toBe(0.5);
    expect(readUnits(4097, { consistent: true, transactional: true })).toBe(4);
  });

  it('writes: an index entry that moves is a delete on its old partition and a put on its new one; unchanged keys cost the index nothing', () => {
    const before = { PK: 'P', SK: 'S', GSI2PK: 'RUN#ACTIVE#webhook#1', GSI2SK: 'W#x', n: 1 };
    const moved = { ...before, GSI2SK: 'L#1#x', n: 2 };
    expect(writeParts(before, moved, false).map((p) => [p.index, p.pk, p.sk, p.units])).toEqual([
      ['table', 'P', 'S', 1],
      ['GSI2', 'RUN#ACTIVE#webhook#1', 'W#x', 1],
      ['GSI2', 'RUN#ACTIVE#webhook#1', 'L#1#x', 1],
    ]);
    expect(writeParts(moved, { ...moved, n: 3 }, true).map((p) => [p.index, p.units])).toEqual([['table', 2]]);
    expect(writeParts(undefined, undefined, false, { PK: 'P', SK: 'S' })).toEqual([{ index: 'table', pk: 'P', sk: 'S', units: 1 }]);
  });

  it("a query names its partition by the key condition's = term (through attribute names) and costs its items' bytes once", async () => {
    const input = {
      IndexName: 'GSI2',
      KeyConditionExpression: '#pk = :pk AND GSI2SK < :now',
      ExpressionAttributeNames: { '#pk': 'GSI2PK' },
      ExpressionAttributeValues: { ':pk': 'APPROVAL#EXPIRY', ':now': '1' },
    };
    expect(queryPartition(input)).toBe('APPROVAL#EXPIRY');
    const reread: Reread = { item: async () => undefined, query: async () => [] };
    const items = Array.from({ length: 100 }, (_, i) => ({ PK: `ACC#${i}`, SK: 'x'.repeat(80) }));
    const [part] = await readParts('Query', input, { Items: items }, reread);
    // About 8.6 KB of index entries: 3 units of 4 KB, eventually consistent (an index).
    expect(part).toEqual({ index: 'GSI2', pk: 'APPROVAL#EXPIRY', units: 1.5 });
  });

  it('a projected get is priced by the whole item, read again; keys a BatchGet left unprocessed cost nothing yet', async () => {
    const big = { PK: 'A', SK: 'B', blob: 'x'.repeat(5000) };
    const reread: Reread = { item: async () => big, query: async () => [] };
    const got = await readParts(
      'GetItem',
      { Key: { PK: 'A', SK: 'B' }, ProjectionExpression: 'PK', ConsistentRead: true },
      { Item: { PK: 'A' } },
      reread,
    );
    expect(got).toEqual([{ index: 'table', pk: 'A', sk: 'B', units: 2 }]);
    const batch = await readParts(
      'BatchGetItem',
      {
        RequestItems: {
          t: {
            Keys: [
              { PK: 'A', SK: 'B' },
              { PK: 'C', SK: 'D' },
            ],
          },
        },
      },
      { Responses: { t: [big] }, UnprocessedKeys: { t: { Keys: [{ PK: 'C', SK: 'D' }] } } },
      reread,
    );
    expect(batch).toEqual([{ index: 'table', pk: 'A', sk: 'B', units: 1 }]);
  });
});

describe('projection and gates', () => {
  const w = (pk: string, sk: string | undefined, units: number): Access => ({
    op: 'write',
    command: 'PutItem',
    index: 'table',
    pk,
    sk,
    units,
  });
  /** Ten units of work: each writes one unit on a deployment-wide item and 3 on its own run's item, reads the account's partition. */
  const accesses: Access[] = [];
  for (let i = 0; i < 10; i++) {
    const r = `ex_${ulid(String.fromCharCode(104 + i))}`;
    accesses.push(w('HOT#ALL', 'ITEM', 1), w(`ACC#${acc}#EX#${r}`, 'EV#x', 3));
    accesses.push({ op: 'read', command: 'Query', index: 'table', pk: `ACC#${acc}`, units: 0.5 });
  }
  const measured = perUnit(accesses, 10);
  const row = (rows: ReturnType<typeof project>['keys'], key: string) => rows.find((r) => r.key === key);

  it('units per unit of work: summed per family, divided by the units measured; a query counts for its key only', () => {
    expect(measured.keys.map((k) => [k.key, k.wcu, k.rcu])).toEqual([
      ['HOT#ALL', 1, 0],
      ['ACC#<account>#EX#<run>', 3, 0],
      ['ACC#<account>', 0, 0.5],
    ]);
    expect(measured.items.map((k) => k.item)).toEqual(['ITEM', 'EV#x']);
  });

  it('a planted deployment-wide key is hot at 1,000 units of work a second; a per-run key spreads and is not', () => {
    const { keys, items } = project({
      name: 't',
      parts: [{ work: 'w', perSecond: 1000, ...measured }],
      counts: { account: 1, run: 1000 },
    });
    expect(row(keys, 'HOT#ALL')).toMatchObject({ values: 1, wcu: 1000, hot: true });
    expect(row(keys, 'ACC#<account>#EX#<run>')).toMatchObject({ values: 1000, wcu: 3, totalWcu: 3000, hot: false });
    expect(row(keys, 'ACC#<account>')).toMatchObject({ values: 1, rcu: 500, hot: false });
    expect(items[0]).toMatchObject({ key: 'HOT#ALL', item: 'ITEM', hot: true });
    expect(keys[0]?.key).toBe('HOT#ALL');
    expect(heat(keys[0] as never)).toBe(2);
  });

  it("an account's key is shared by its account's work only: 1,000 accounts at 2 units of work a second each stay under", () => {
    const { keys } = project({ name: 't', parts: [{ work: 'w', perSecond: 2000, ...measured }], counts: { account: 1000, run: 2000 } });
    expect(row(keys, 'ACC#<account>')).toMatchObject({ values: 1000, rcu: 1, hot: false });
    expect(row(keys, 'HOT#ALL')).toMatchObject({ values: 1, wcu: 2000, hot: true });
  });

  it('values: the largest count of the placeholders a family holds; a placeholder without a count is an error', () => {
    expect(valuesOf('ACC#<account>#EX#<run>', { account: 10, run: 500 })).toBe(500);
    expect(valuesOf('SCHEDULES', {})).toBe(1);
    expect(() => valuesOf('CH#<channel>', { account: 1 })).toThrow(/<channel>/);
  });

  it("a write shard at a partition key's end is <shard>: a key family takes its ids' values times its shards, an item family its ids'", () => {
    expect(keyFamily(`ACC#${acc}#EX#3`)).toBe('ACC#<account>#EX#<shard>');
    expect(keyFamily('RUN#ACTIVE#api#117')).toBe('RUN#ACTIVE#api#<shard>');
    expect(keyFamily('APPROVAL#NUDGE#15')).toBe('APPROVAL#NUDGE#<shard>');
    expect(keyFamily('APPROVAL#NUDGE')).toBe('APPROVAL#NUDGE');
    expect(keyFamily(`EX#${acc}#${run}`)).toBe('EX#<account>#<run>');
    const s = { counts: { account: 10, run: 500, shard: 4 }, shards: { 'RUN#ACTIVE#': 128 } };
    expect(shardsOf(s, 'ACC#<account>#EX#<shard>')).toBe(4);
    expect(shardsOf(s, 'RUN#ACTIVE#webhook#<shard>')).toBe(128);
    expect(shardsOf(s, 'ACC#<account>')).toBe(1);
    expect(valuesOf('ACC#<account>#EX#<shard>', s.counts, 4)).toBe(40);
    expect(valuesOf('RUN#ACTIVE#webhook#<shard>W#<run>', s.counts)).toBe(500);
  });

  it('an item family with a constant sort key on a sharded key is one item per shard (a ring of slots); one with an id, one per id', () => {
    const wh = `wh_${ulid('f')}`;
    const puts = Array.from({ length: 50 }, (_, i) => w(`WHREQ#${wh}#${i}`, 'REQ', 2));
    const ring = { name: 'ring', counts: { account: 1, webhook: 1, run: 50, shard: 4 }, shards: { 'WHREQ#': 50 } };
    const { items } = project({ ...ring, parts: [{ work: 'flood', perSecond: 10, ...perUnit(puts, 1) }] });
    expect(items.map((i) => [i.key, i.item, i.values, i.wcu])).toEqual([['WHREQ#<webhook>#<shard>', 'REQ', 50, 20]]);
    const listed = Array.from({ length: 4 }, (_, i) => w(`ACC#${acc}#EX#${i}`, `EX#${run}`, 1));
    const byRun = project({ ...ring, parts: [{ work: 'runs', perSecond: 50, ...perUnit(listed, 1) }] }).items;
    expect(byRun.map((i) => [i.key, i.item, i.values])).toEqual([['ACC#<account>#EX#<shard>', 'EX#<run>', 50]]);
  });

  it('the gates are half of DynamoDB per-partition limits, and a difference drops what both measurements hold', () => {
    expect(GATE).toEqual({ wcu: 500, rcu: 1500 });
    const with_ = perUnit([...accesses, w('ONLY#WITH', 'X', 4)], 1).keys;
    expect(difference(with_, perUnit(accesses, 1).keys)).toEqual([{ index: 'table', key: 'ONLY#WITH', wcu: 4, rcu: 0 }]);
  });
});

describe('totals per table and index, gated against the warm throughput and the table-level quota', () => {
  const write = (index: string, pk: string, units: number): Access => ({ op: 'write', command: 'PutItem', index, pk, sk: 'S', units });
  /** One unit of work: 8 write units on the run's own partition, 5 on one active-index shard, a read of half a unit. */
  const work = (i: number): Access[] => {
    const r = `ex_${ulid(String.fromCharCode(104 + i))}`;
    return [
      write('table', `EX#${acc}#${r}`, 8),
      write('GSI2', `RUN#ACTIVE#webhook#${i % 4}`, 5),
      { op: 'read', command: 'GetItem', index: 'table', pk: `ACC#${acc}`, sk: 'ACCOUNT', units: 0.5 },
    ];
  };
  const measured = perUnit(Array.from({ length: 10 }, (_, i) => work(i)).flat(), 10);
  const at = (perSecond: number) =>
    totals(project({ name: 't', parts: [{ work: 'w', perSecond, ...measured }], counts: { account: 1, run: perSecond, shard: 4 } }).keys);
  const capacity: Capacity = {
    warm: { table: { read: 12_000, write: 11_000 }, GSI2: { read: 12_000, write: 7_000 } },
    quota: { read: 40_000, write: 40_000 },
  };

  it('sums the key families of each table and index: units of work a second × units a work, whatever the values they spread over', () => {
    expect(at(1000)).toEqual([
      { index: 'table', wcu: 8000, rcu: 500 },
      { index: 'GSI2', wcu: 5000, rcu: 0 },
    ]);
  });

  it('passes totals within the warm throughput, requiring nothing', () => {
    const { rows, failures } = capacityGate({ name: '(a) t' }, at(1000), capacity, '');
    expect(failures).toEqual([]);
    expect(rows.find((r) => r.index === 'table' && r.op === 'write')).toMatchObject({
      total: 8000,
      warm: 11_000,
      quota: 40_000,
      needs: [],
    });
  });

  it('fails a total over its warm throughput that the scenario does not declare, naming the pre-warm it needs', () => {
    const { failures } = capacityGate({ name: '(x) t' }, at(2000), capacity, '');
    expect(failures).toEqual([
      '(x) table: 16,000 WRU/s is over its warm throughput (11,000 WRU/s): it needs pre-warm table writes to 16,000 WRU/s; declare it in the scenario\'s requires and name it in docs/deploying.md "Quotas"',
      '(x) GSI2: 10,000 WRU/s is over its warm throughput (7,000 WRU/s): it needs pre-warm GSI2 writes to 10,000 WRU/s; declare it in the scenario\'s requires and name it in docs/deploying.md "Quotas"',
    ]);
  });

  it('fails a total over the table-level quota, naming the quota increase, even when its pre-warm is declared', () => {
    const requires = [
      { kind: 'warm' as const, index: 'table', op: 'write' as const, atLeast: 50_000 },
      { kind: 'warm' as const, index: 'GSI2', op: 'write' as const, atLeast: 30_000 },
    ];
    const { failures, rows } = capacityGate({ name: '(x) t', requires }, at(6000), capacity);
    expect(failures).toEqual([
      '(x) table: 48,000 WRU/s is over the table-level quota (40,000 WRU/s): it needs table-level write quota 48,000 WRU/s; declare it in the scenario\'s requires and name it in docs/deploying.md "Quotas"',
      '(x) pre-warm table writes to 50,000 WRU/s is over the table-level quota (40,000 WRU/s), which AWS refuses: it needs table-level write quota 50,000 WRU/s; declare it in the scenario\'s requires and name it in docs/deploying.md "Quotas"',
    ]);
    expect(rows.find((r) => r.index === 'table' && r.op === 'write')?.needs.map(requirementText)).toEqual([
      'pre-warm table writes to 48,000 WRU/s',
      'table-level write quota 48,000 WRU/s',
    ]);
    // Declared too low is not declared.
    const low = capacityGate(
      { name: '(x) t', requires: [...requires, { kind: 'quota', op: 'write', atLeast: 45_000 }] },
      at(6000),
      capacity,
    );
    expect(low.failures).toHaveLength(2);
    expect(low.failures[0]).toMatch(/^\(x\) table: 48,000 WRU\/s is over the table-level quota \(40,000 WRU\/s\)/);
    expect(low.failures[1]).toMatch(/^\(x\) pre-warm table writes to 50,000 WRU\/s is over the table-level quota \(45,000 WRU\/s\)/);
    expect(
      capacityGate({ name: '(x) t', requires: [...requires, { kind: 'quota', op: 'write', atLeast: 50_000 }] }, at(6000), capacity)
        .failures,
    ).toEqual([]);
  });

  it('fails a pre-warm over the quota when the total is under it: AWS pre-warms up to the quota only', () => {
    // 4,500 runs/s: table 36,000, under the quota; its pre-warm with a quarter of headroom, 45,000, is not.
    const requires = [
      { kind: 'warm' as const, index: 'table', op: 'write' as const, atLeast: 45_000 },
      { kind: 'warm' as const, index: 'GSI2', op: 'write' as const, atLeast: 23_000 },
    ];
    expect(capacityGate({ name: '(x) t', requires }, at(4500), capacity).failures).toEqual([
      '(x) pre-warm table writes to 45,000 WRU/s is over the table-level quota (40,000 WRU/s), which AWS refuses: it needs table-level write quota 45,000 WRU/s; declare it in the scenario\'s requires and name it in docs/deploying.md "Quotas"',
    ]);
    const raised = [...requires, { kind: 'quota' as const, op: 'write' as const, atLeast: 45_000 }];
    expect(capacityGate({ name: '(x) t', requires: raised }, at(4500), capacity).failures).toEqual([]);
  });

  it('passes a declared requirement only when docs/deploying.md names it on a line of the scenario', () => {
    const requires = [
      { kind: 'warm' as const, index: 'table', op: 'write' as const, atLeast: 20_000 },
      { kind: 'warm' as const, index: 'GSI2', op: 'write' as const, atLeast: 12_000 },
    ];
    const s = { name: '(x) t', requires };
    const named = '| (x) | pre-warm table writes to 20,000 WRU/s; pre-warm GSI2 writes to 12,000 WRU/s |';
    expect(capacityGate(s, at(2000), capacity, named).failures).toEqual([]);
    expect(
      capacityGate(s, at(2000), capacity, '| (y) | pre-warm table writes to 20,000 WRU/s; pre-warm GSI2 writes to 12,000 WRU/s |').failures,
    ).toEqual([
      '(x) requires pre-warm table writes to 20,000 WRU/s, which docs/deploying.md "Quotas" does not name on a line of (x)',
      '(x) requires pre-warm GSI2 writes to 12,000 WRU/s, which docs/deploying.md "Quotas" does not name on a line of (x)',
    ]);
  });
});

describe("the issue's targets", () => {
  const none = { keys: [], items: [] };
  const m: Measurements = {
    oneStep: none,
    tenStep: none,
    manyAccounts: none,
    reminder: none,
    fire: none,
    drift: none,
    pass: none,
    httpFlush: { 'webhook trigger': none, 'approvals route': none },
    workerFlush: { oneStep: none, tenStep: none, manyAccounts: none, fire: none },
    refused: { request: none, countsFlush: none, log: none },
  };
  const [a, b, c, d] = heatScenarios(m);

  it('(a) and (b): one account at 1,000 runs/s; (c): 1,000 accounts at 10 runs/s each', () => {
    for (const s of [a, b]) expect([s?.parts[0]?.perSecond, s?.counts.account, s?.counts.run]).toEqual([1000, 1, 1000]);
    expect([c?.parts[0]?.perSecond, c?.counts.account, c?.counts.run]).toEqual([10_000, 1000, 10_000]);
  });

  it("the counts' flushes: the runs worker's once per account in each full batch, an HTTP function's once a second per instance and account it served", () => {
    const flushes = (s: typeof a) => s?.parts.slice(1).map((p) => [p.work.split(':')[0], p.perSecond]);
    // One account: a batch of 10 runs writes its items once; 100 instances each write them once a second.
    expect(flushes(a)).toEqual([
      ['runs worker', 100],
      ['webhook trigger', 100],
    ]);
    expect(flushes(b)).toEqual([
      ['runs worker', 100],
      ['webhook trigger', 100],
      ['approvals route', 100],
    ]);
    // 1,000 accounts: 10 in each batch, once per run; each instance serves 100 requests a second of 100 accounts.
    expect(flushes(c)).toEqual([
      ['runs worker', 10_000],
      ['webhook trigger', 10_000],
    ]);
  });

  it('(d): 1,000,000 approvals reminded each hour, 100,000 schedules a minute (fired, and read by the drift repair), a sweep a minute', () => {
    expect(d?.parts.map((p) => [p.work, p.perSecond])).toEqual([
      ['reminder', 1_000_000 / REMINDER_EVERY_SECONDS],
      ['schedule fire and its one-step run', 100_000 / 60],
      ["runs worker: each batch's flush of its counts (batches of 10, 10 accounts in each)", 100_000 / 60],
      ['drift repair, per schedule per pass', 100_000 / 60],
      ['sweep pass with nothing due', 1 / SWEEP_EVERY_SECONDS],
    ]);
    expect([d?.counts.approval, d?.counts.schedule, d?.counts.account]).toEqual([1_000_000, 100_000, 1000]);
  });

  it('every requirement a target declares is named in docs/deploying.md "Quotas" and, by its figure, in the targets table of docs/performance.md', () => {
    const performance = readFileSync(new URL('../../docs/performance.md', import.meta.url), 'utf8');
    expect(performance).toContain('| | Target | Works, a second | The quotas it needs on AWS ([Quotas](deploying.md#quotas)) |');
    expect(quotasSection()).toMatch(/^## Quotas/);
    for (const s of [a, b, c, d]) {
      const letter = s?.name.slice(0, 3) as string;
      // No totals: only the documentation is checked.
      expect(capacityGate(s as never, [], defaultCapacity(), quotasSection()).failures, letter).toEqual([]);
      const row = performance.split('\n').find((l) => l.startsWith(`| ${letter} |`)) ?? '';
      for (const r of s?.requires ?? []) expect(row, `${letter} ${requirementText(r)}`).toContain(r.atLeast.toLocaleString('en-US'));
    }
    expect(a?.requires).toEqual([]);
  });
});
