import { describe, expect, it } from 'vitest';
import {
  forEachShard,
  PassBudget,
  SHARDS_AT_ONCE,
  SWEEP_SHARDS,
  sweepPartition,
  sweepPartitions,
  sweepPass,
} from '../../shared/db/sweep-shards.ts';

// The sweeps' sharded partitions (shared/db/sweep-shards.ts): where an item goes, what a sweep reads,
// how many shards it reads at once and the bound a pass shares.

describe('sweep shards', () => {
  it('an item has one shard of its family, by its id, the same in every process; ids spread over every shard', () => {
    const id = 'ap_01jdmzq3y7w3m6v2f4n8k9h0pa';
    expect(sweepPartition('APPROVAL#NUDGE', id)).toBe(sweepPartition('APPROVAL#NUDGE', id));
    expect(sweepPartition('APPROVAL#NUDGE', id)).toMatch(/^APPROVAL#NUDGE#([0-9]|1[0-5])$/);
    const counts = new Map<string, number>();
    for (let i = 0; i < 1600; i++) {
      const p = sweepPartition('X', `ap_${i.toString(36).padStart(26, '0')}`);
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    expect(counts.size).toBe(SWEEP_SHARDS);
    for (const n of counts.values()) expect(n).toBeGreaterThan(50);
  });

  it('a sweep reads the unsharded partition of before the upgrade and every shard', () => {
    expect(sweepPartitions('SCHEDULES')).toEqual(['SCHEDULES', ...Array.from({ length: SWEEP_SHARDS }, (_, i) => `SCHEDULES#${i}`)]);
  });

  it('reads a few shards at once, each once, and gives their answers in order', async () => {
    let open = 0;
    let most = 0;
    const seen: string[] = [];
    const out = await forEachShard(sweepPartitions('F'), async (p) => {
      open++;
      most = Math.max(most, open);
      seen.push(p);
      await new Promise((r) => setTimeout(r, 2));
      open--;
      return p.length;
    });
    expect(most).toBe(SHARDS_AT_ONCE);
    expect(seen.sort()).toEqual(sweepPartitions('F').sort());
    expect(out).toEqual(sweepPartitions('F').map((p) => p.length));
  });

  it('a pass budget is shared: pages take what is left and give back what they did not read; a shard waits for pages out', async () => {
    const budget = new PassBudget(60);
    expect([await budget.take(25), await budget.take(25), await budget.take(25)]).toEqual([25, 25, 10]);
    // Nothing left while pages are out: the next take waits for them.
    const waiting = budget.take(25);
    budget.done(25, 5);
    expect(await waiting).toBe(20);
    budget.done(25, 25);
    budget.done(10, 10);
    budget.done(20, 20);
    expect(await budget.take(25)).toBe(0);
    expect(await new PassBudget(10, Date.now() - 1).take(5)).toBe(0);
  });

  it('a pass reads at most its total over every shard, shards found empty costing nothing', async () => {
    const due = new Map(sweepPartitions('F').map((p, i) => [p, i % 3 === 0 ? 40 : 0]));
    let read = 0;
    await sweepPass(sweepPartitions('F'), { total: 100, page: 25, until: Date.now() + 10_000 }, async (p, limit) => {
      const n = Math.min(limit, due.get(p) ?? 0);
      due.set(p, (due.get(p) ?? 0) - n);
      read += n;
      await new Promise((r) => setTimeout(r, 1));
      return { read: n, more: n === limit };
    });
    expect(read).toBe(100);
  });
});
