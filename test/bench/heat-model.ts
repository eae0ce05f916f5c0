import type { Access } from './heat-record.ts';

/**
 * The heat model's arithmetic (docs/performance.md "Heat: per-key throughput at scale"), apart from
 * any measurement so that it can be checked by hand:
 *
 * 1. Families. Each key value is normalized by replacing its ids with placeholders that say what the
 *    id is (`ACC#acc_01j…` → `ACC#<account>`, `ACC#acc_…#EX#ex_…` → `ACC#<account>#EX#<run>`), and
 *    times and shard numbers likewise. A key family is (table or index, partition key family); an
 *    item family adds the sort key's family.
 * 2. Per unit of work. The accesses recorded while the bench did `units` units of a work (runs,
 *    reminders, fires, sweep passes) are summed per family and divided by `units`.
 * 3. Projection. At a scenario's target each work has a rate (units of work a second); a family's
 *    total is Σ rate × units per unit of work. That total is shared by the family's distinct values:
 *    `values` = the largest count, in the scenario, of the placeholders it holds (ids nest: a run's key
 *    holds its account too, and takes as many values as there are runs), 1 for a family without any
 *    (`APPROVAL#NUDGE`). Ids that are new with each unit of work (a run, an event) count their rate:
 *    the units of one run are taken as landing within one second. The load is taken as even over the
 *    values (each account the same share): per value = total / values.
 * 4. Gates. Half of DynamoDB's per-partition and per-item limits (1,000 write units and 3,000 read
 *    units a second), leaving room for bursts: a family over either is reported hot.
 * 5. Totals. A table's or index's units a second are the sum of its key families' totals, gated
 *    against what it serves at once (its warm throughput) and the per-table quota (`capacityGate`).
 */
export const GATE = { wcu: 500, rcu: 1500 } as const;

/** An id of the service: its type prefix and a lower-case ULID, not inside a longer word. */
const id = (prefix: string) => new RegExp(`(?<![0-9a-z_])${prefix}_[0-9a-z]{26}(?![0-9a-z])`, 'g');
/** Placeholders, in the order they are replaced (prefixed ids first, then bare ids, then numbers). */
const RULES: [RegExp, string][] = [
  ...(
    [
      ['acc', 'account'],
      ['usr', 'user'],
      ['wf', 'workflow'],
      ['wh', 'webhook'],
      ['ex', 'run'],
      ['ap', 'approval'],
      ['ar', 'artifact'],
      ['ch', 'channel'],
      ['dl', 'delivery'],
      ['cb', 'callback'],
      ['sch', 'schedule'],
      ['ev', 'event'],
      ['au', 'audit'],
      ['ae', 'audit'],
    ] as const
  ).map(([prefix, name]): [RegExp, string] => [id(prefix), `<${name}>`]),
  // Key and session ids are bare ULIDs (they sit inside tokens).
  [/(KEY#(?:<user>#)?)[0-9a-z]{26}(?![0-9a-z])/g, '$1<key>'],
  [/(SESSION#)[0-9a-z]{26}(?![0-9a-z])/g, '$1<session>'],
  [/(?<![0-9a-z])[0-9a-z]{26}(?![0-9a-z])/g, '<id>'],
  [/^(RUN#ACTIVE#[a-z]+#)\d+$/, '$1<shard>'],
  // A source address's failed-authentication counter (shared/domain/auth-failures.ts): an IPv4 address or an IPv6 /64.
  [/^(AUTHFAIL#)[0-9a-f.:/]+$/, '$1<address>'],
  // An account's rate counters other than its account item (rate-counters.ts).
  [/^(RATE#<account>#)\d+$/, '$1<counter>'],
  // Times: ISO 8601 in sort keys (the audit log's; an hour's counts, to the hour), epoch seconds or
  // milliseconds, zero-padded in sort keys.
  [/\d{4}-\d{2}-\d{2}T\d{2}(?::\d{2}:\d{2}(?:\.\d{3})?Z)?(?![\d:])/g, '<time>'],
  [/(?<![0-9a-z])\d{10,20}(?![0-9a-z])/g, '<time>'],
];

/** A key value's family: its ids, times and shard numbers replaced by placeholders. */
export const family = (value: string) => RULES.reduce((s, [re, to]) => s.replace(re, to), value);

/**
 * A partition key value's family: as `family`, and a write shard at its end (`<listing key>#<n>`,
 * shared/db/shards.ts) as `<shard>`.
 */
export const keyFamily = (value: string) => family(value).replace(/#\d{1,3}$/, '#<shard>');

/** The placeholders a family holds, without their brackets (`ACC#<account>#EX#<run>` → account, run). */
export const placeholders = (f: string) => [...f.matchAll(/<([a-z]+)>/g)].map((m) => m[1] as string);

/** Units a unit of work puts on one family: `sk` absent for a key (partition) family. */
export type Load = { index: string; key: string; item?: string; wcu: number; rcu: number };

const add = (into: Map<string, Load>, id: string, base: Omit<Load, 'wcu' | 'rcu'>, a: Pick<Access, 'op' | 'units'>) => {
  const l = into.get(id) ?? { ...base, wcu: 0, rcu: 0 };
  if (a.op === 'write') l.wcu += a.units;
  else l.rcu += a.units;
  into.set(id, l);
};

/**
 * Units per unit of work, per key family and per item family (a query reads a partition's range: it
 * counts for its key family only).
 */
export function perUnit(accesses: readonly Access[], units: number): { keys: Load[]; items: Load[] } {
  if (!(units > 0)) throw new Error(`units of work must be positive (got ${units})`);
  const keys = new Map<string, Load>();
  const items = new Map<string, Load>();
  for (const a of accesses) {
    const key = keyFamily(a.pk);
    add(keys, `${a.index}\u0000${key}`, { index: a.index, key }, a);
    if (a.sk === undefined) continue;
    const item = family(a.sk);
    add(items, `${a.index}\u0000${key}\u0000${item}`, { index: a.index, key, item }, a);
  }
  const per = (l: Load) => ({ ...l, wcu: l.wcu / units, rcu: l.rcu / units });
  return { keys: [...keys.values()].map(per), items: [...items.values()].map(per) };
}

/** `a - b` per family (a measurement with the work, less one without it), dropping families left at zero. */
export function difference(a: readonly Load[], b: readonly Load[]): Load[] {
  const id = (l: Load) => `${l.index}\u0000${l.key}\u0000${l.item ?? ''}`;
  const out = new Map(a.map((l) => [id(l), { ...l }]));
  for (const l of b) {
    const d = out.get(id(l)) ?? { ...l, wcu: 0, rcu: 0 };
    d.wcu -= l.wcu;
    d.rcu -= l.rcu;
    out.set(id(l), d);
  }
  const tiny = (x: number) => Math.abs(x) < 1e-9;
  return [...out.values()]
    .filter((l) => !tiny(l.wcu) || !tiny(l.rcu))
    .map((l) => ({ ...l, wcu: tiny(l.wcu) ? 0 : l.wcu, rcu: tiny(l.rcu) ? 0 : l.rcu }));
}

/** A measured work at its target: units per unit of work (`perUnit`) and units of work a second. */
export type Part = { work: string; perSecond: number; keys: Load[]; items: Load[] };
/**
 * A scenario: its works and how many distinct values each placeholder takes at the target; `shards`:
 * how many shards a key family with `<shard>` is written across, by the family's start (`RUN#ACTIVE#`),
 * else `counts.shard`.
 */
export type Scenario = {
  name: string;
  parts: Part[];
  counts: Record<string, number>;
  shards?: Record<string, number>;
  /** What the scenario needs beyond a default deployment (`capacityGate`), each named in docs/deploying.md "Quotas". */
  requires?: Requirement[];
};
/** A projected family: units a second on each of its `values`, and whether that is over a gate. */
export type Row = Load & { values: number; totalWcu: number; totalRcu: number; hot: boolean };

/**
 * How many distinct values a family takes (step 3 above): the largest count of its ids, times the
 * shards it is written across (`<shard>`, a key family's only); a placeholder without a count is an error.
 */
export function valuesOf(f: string, counts: Record<string, number>, shards = 1): number {
  let n = 1;
  for (const p of placeholders(f)) {
    if (p === 'shard') continue;
    const c = counts[p];
    if (c === undefined) throw new Error(`no count of <${p}> (in ${f}) for this scenario`);
    n = Math.max(n, c);
  }
  return n * shards;
}

/**
 * The shards a key family is written across (1 without `<shard>`). An item family with an id in its
 * sort key is one item per id whatever its shard: its values are its ids' (`projectLoads`).
 */
export function shardsOf(s: Pick<Scenario, 'counts' | 'shards'>, key: string): number {
  if (!key.includes('<shard>')) return 1;
  const n = Object.entries(s.shards ?? {}).find(([start]) => key.startsWith(start))?.[1] ?? s.counts.shard;
  if (n === undefined) throw new Error(`no count of <shard> (in ${key}) for this scenario`);
  return n;
}

function projectLoads(parts: readonly Part[], pick: (p: Part) => Load[], s: Pick<Scenario, 'counts' | 'shards'>): Row[] {
  const totals = new Map<string, Load>();
  for (const part of parts)
    for (const l of pick(part)) {
      const id = `${l.index}\u0000${l.key}\u0000${l.item ?? ''}`;
      const t = totals.get(id) ?? { ...l, wcu: 0, rcu: 0 };
      t.wcu += l.wcu * part.perSecond;
      t.rcu += l.rcu * part.perSecond;
      totals.set(id, t);
    }
  return [...totals.values()]
    .map((t) => {
      // An item family with an id of its own takes its ids' values whatever its key's shard; one without (a constant
      // sort key) is one item on each value of its key, shards included (a webhook's inbound log: 50 `WHREQ#…` / `REQ`).
      const shards = t.item === undefined || placeholders(t.item).length === 0 ? shardsOf(s, t.key) : 1;
      const values = valuesOf(`${t.key}${t.item ?? ''}`, s.counts, shards);
      const [wcu, rcu] = [t.wcu / values, t.rcu / values];
      return { ...t, wcu, rcu, values, totalWcu: t.wcu, totalRcu: t.rcu, hot: wcu > GATE.wcu || rcu > GATE.rcu };
    })
    .sort((x, y) => heat(y) - heat(x));
}

/** How far a row is toward its nearer gate (1: at a gate). */
export const heat = (r: Pick<Load, 'wcu' | 'rcu'>) => Math.max(r.wcu / GATE.wcu, r.rcu / GATE.rcu);

/** A scenario projected: every key family and every item family, hottest first. */
export function project(s: Scenario): { keys: Row[]; items: Row[] } {
  return {
    keys: projectLoads(s.parts, (p) => p.keys, s),
    items: projectLoads(s.parts, (p) => p.items, s),
  };
}

/** A table's or index's units a second at a scenario's target. */
export type Total = { index: string; wcu: number; rcu: number };

/** Each table's and index's units a second: the sum of its key families' totals (an item family is part of its key's). */
export function totals(keys: readonly Row[]): Total[] {
  const by = new Map<string, Total>();
  for (const k of keys) {
    const t = by.get(k.index) ?? { index: k.index, wcu: 0, rcu: 0 };
    t.wcu += k.totalWcu;
    t.rcu += k.totalRcu;
    by.set(k.index, t);
  }
  return [...by.values()].sort((a, b) => (a.index === 'table' ? -1 : b.index === 'table' ? 1 : a.index.localeCompare(b.index)));
}

type Op = 'read' | 'write';
/**
 * What a scenario needs beyond a default deployment: `warm`, a part's warm throughput raised (the
 * `warmThroughput` setting: a pre-warm) to `atLeast` units a second; `quota`, the account's
 * table-level quota (Service Quotas; one quota binds the table and each index on its own) raised to
 * `atLeast`.
 */
export type Requirement = { kind: 'warm'; index: string; op: Op; atLeast: number } | { kind: 'quota'; op: Op; atLeast: number };
/** The capacity a deployment has: each part's warm throughput, and the table-level quota. */
export type Capacity = { warm: Record<string, { read: number; write: number }>; quota: { read: number; write: number } };

const unit = (op: Op) => (op === 'write' ? 'WRU/s' : 'RRU/s');
const whole = (x: number) => Math.ceil(x - 1e-9).toLocaleString('en-US');
/** How a requirement is named, in the gate's messages and in docs/deploying.md "Quotas". */
export const requirementText = (r: Requirement) =>
  r.kind === 'warm'
    ? `pre-warm ${r.index} ${r.op}s to ${whole(r.atLeast)} ${unit(r.op)}`
    : `table-level ${r.op} quota ${whole(r.atLeast)} ${unit(r.op)}`;

/** One part's reads or writes against what it has. */
export type CapacityRow = { index: string; op: Op; total: number; warm: number; quota: number; needs: Requirement[] };

/**
 * The totals gate of one scenario: each part's reads and writes against its warm throughput (what it
 * serves at once: more and it throttles until it has grown, twice its previous peak within 30 minutes
 * at most) and against the table-level quota (more and it throttles for good). Where a total is over
 * either the scenario must declare the pre-warm or the quota increase it needs (`requires`, at least the
 * total), and a pre-warm over the quota needs the quota raised to it (AWS refuses it otherwise); each requirement it declares must be named, as `requirementText` writes it, on a line of
 * `documented` (docs/deploying.md "Quotas") that names the scenario (`(a)`). Failures say what is missing.
 */
export function capacityGate(
  s: Pick<Scenario, 'name' | 'requires'>,
  parts: readonly Total[],
  capacity: Capacity,
  documented?: string,
): { rows: CapacityRow[]; failures: string[] } {
  const letter = /^\(\w+\)/.exec(s.name)?.[0] ?? s.name;
  const declared = s.requires ?? [];
  const failures: string[] = [];
  const names = [...new Set([...Object.keys(capacity.warm), ...parts.map((p) => p.index)])];
  const rows: CapacityRow[] = [];
  for (const index of names) {
    const t = parts.find((p) => p.index === index) ?? { wcu: 0, rcu: 0 };
    for (const op of ['write', 'read'] as const) {
      const total = op === 'write' ? t.wcu : t.rcu;
      const warm = capacity.warm[index]?.[op] ?? 0;
      const quota = capacity.quota[op];
      const needs: Requirement[] = [];
      if (total > warm) needs.push({ kind: 'warm', index, op, atLeast: total });
      if (total > quota) needs.push({ kind: 'quota', op, atLeast: total });
      for (const need of needs) {
        const covered = declared.some(
          (r) =>
            r.kind === need.kind &&
            r.op === need.op &&
            (r.kind === 'quota' || (need.kind === 'warm' && r.index === need.index)) &&
            r.atLeast >= need.atLeast - 1e-9,
        );
        if (covered) continue;
        const over =
          need.kind === 'warm' ? `its warm throughput (${whole(warm)} ${unit(op)})` : `the table-level quota (${whole(quota)} ${unit(op)})`;
        failures.push(
          `${letter} ${index}: ${whole(total)} ${unit(op)} is over ${over}: it needs ${requirementText(need)}; declare it in the scenario's requires and name it in docs/deploying.md "Quotas"`,
        );
      }
      rows.push({ index, op, total, warm, quota, needs });
    }
  }
  // AWS pre-warms a table or an index up to the table-level quota and no further (UpdateTable refuses more).
  for (const r of declared) {
    if (r.kind !== 'warm') continue;
    const quota = Math.max(capacity.quota[r.op], ...declared.filter((q) => q.kind === 'quota' && q.op === r.op).map((q) => q.atLeast));
    if (r.atLeast > quota + 1e-9)
      failures.push(
        `${letter} ${requirementText(r)} is over the table-level quota (${whole(quota)} ${unit(r.op)}), which AWS refuses: it needs table-level ${r.op} quota ${whole(r.atLeast)} ${unit(r.op)}; declare it in the scenario's requires and name it in docs/deploying.md "Quotas"`,
      );
  }
  if (documented !== undefined) {
    const lines = documented.split('\n').filter((l) => l.includes(letter));
    for (const r of declared) {
      if (!lines.some((l) => l.includes(requirementText(r)))) {
        failures.push(`${letter} requires ${requirementText(r)}, which docs/deploying.md "Quotas" does not name on a line of ${letter}`);
      }
    }
  }
  return { rows, failures };
}
