import { describe, expect, it } from 'vitest';
import { RunsQuery } from '../../functions/http/console/runs/list.route.ts';
import { AuditFilters, AuditListQuery } from '../../shared/schemas/audit.ts';
import { IsoTime, TIME_RANGE_IN_ORDER } from '../../shared/schemas/time.ts';

/**
 * The one time-range rule (shared/schemas/time.ts): each bound an ISO 8601 time, and `to` not before
 * `from`, refused at `to`. The audit log's filters (API and console) and the console's runs list read it.
 */
const schemas = { AuditFilters, AuditListQuery, RunsQuery };

describe('a time range', () => {
  it.each(Object.entries(schemas))('%s: refuses a `to` before its `from`, at `to`', (_, schema) => {
    const r = schema.safeParse({ from: '2026-11-27T21:05:00Z', to: '2026-11-27T21:04:59Z' });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['to', 'must not be before from']]);
  });

  it.each(Object.entries(schemas))('%s: takes a range in order, an instant range, and either bound alone', (_, schema) => {
    const from = IsoTime.parse('2026-11-27T21:05:00Z');
    expect(schema.safeParse({ from: '2026-11-27T21:05:00Z', to: '2026-11-28' }).data).toMatchObject({ from, to: from + 10_500_000 });
    expect(schema.safeParse({ from: '2026-11-27T21:05:00Z', to: '2026-11-27T22:05:00+01:00' }).data).toMatchObject({ from, to: from });
    expect(schema.safeParse({ to: '2026-11-27T21:05:00Z' }).success).toBe(true);
    expect(schema.safeParse({ from: '2026-11-27T21:05:00Z' }).success).toBe(true);
  });

  it('is the check itself: absent bounds pass, the order decides', () => {
    const [inOrder] = TIME_RANGE_IN_ORDER;
    expect([inOrder({}), inOrder({ from: 2 }), inOrder({ to: 1 }), inOrder({ from: 1, to: 1 }), inOrder({ from: 2, to: 1 })]).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
  });
});
