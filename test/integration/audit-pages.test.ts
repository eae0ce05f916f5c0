import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db } from '../../shared/clients.ts';
import { auditEntry } from '../../shared/db/audited.ts';
import { AUDIT_SHARDS, type AuditEntry, type AuditQuery, auditPut, listAuditEntries } from '../../shared/db/entities/audit.ts';
import { givenAccount } from '../support/fixtures.ts';

/**
 * The audit log's pages over its write shards (shared/db/entities/audit.ts): page after page, with and
 * without a filter and a time range, every matching entry exactly once, newest first, on the real
 * DynamoDB Local. The entries land on all the shards.
 */

const T0 = Date.UTC(2026, 10, 1);

async function given() {
  const a = await givenAccount();
  // The account's own entries so far (its keys, made now: newer than these).
  const earlier = {
    all: (await listAuditEntries({ accountId: a.account.accountId }, 100)).items.map((e) => e.auditId),
    admin: (await listAuditEntries({ accountId: a.account.accountId, actor: a.admin.userId }, 100)).items.map((e) => e.auditId),
  };
  const who = { accountId: a.account.accountId, userId: a.admin.userId, kind: 'session' };
  // 60 entries a second apart, every third one `key.revoked`, the rest `key.created`.
  const entries = Array.from({ length: 60 }, (_, i) =>
    auditEntry(who, i % 3 === 0 ? 'key.revoked' : 'key.created', { type: 'key', id: `k${i}` }, {}, T0 + i * 1000),
  );
  for (const e of entries) await db().send(new TransactWriteCommand({ TransactItems: [auditPut(e)] }));
  return { a, entries, earlier };
}

/** Every page of a query, `limit` a page: the entries' ids in the order given, and the pages' sizes. */
async function allPages(q: AuditQuery, limit: number) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  for (let pages = 0; pages < 200; pages++) {
    const page = await listAuditEntries(q, limit, startKey);
    ids.push(...page.items.map((e) => e.auditId));
    sizes.push(page.items.length);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    startKey = page.lastKey;
    if (!startKey) return { ids, sizes };
  }
  throw new Error('no last page');
}

const newestFirst = (es: AuditEntry[]) => [...es].sort((x, y) => y.at - x.at).map((e) => e.auditId);

describe('audit log pages over its shards', () => {
  it('gives every entry once, newest first, at any page size, with a filter, a range and both, by account and by actor', async () => {
    const { a, entries, earlier } = await given();
    const accountId = a.account.accountId;
    expect(AUDIT_SHARDS).toBeGreaterThan(1);
    expect(earlier.all.length).toBeGreaterThan(0);
    const revoked = entries.filter((e) => e.action === 'key.revoked');
    const inRange = entries.filter((e) => e.at >= T0 + 10_000 && e.at <= T0 + 40_000);
    for (const limit of [1, 4, 7, 25, 100]) {
      expect((await allPages({ accountId }, limit)).ids, `all, ${limit}`).toEqual([...earlier.all, ...newestFirst(entries)]);
      expect((await allPages({ accountId, actor: a.admin.userId }, limit)).ids, `by actor, ${limit}`).toEqual([
        ...earlier.admin,
        ...newestFirst(entries),
      ]);
      expect((await allPages({ accountId, action: 'key.revoked' }, limit)).ids, `filtered, ${limit}`).toEqual(newestFirst(revoked));
      expect((await allPages({ accountId, from: T0 + 10_000, to: T0 + 40_000 }, limit)).ids, `range, ${limit}`).toEqual(
        newestFirst(inRange),
      );
      expect(
        (await allPages({ accountId, action: 'key.revoked', from: T0 + 10_000, to: T0 + 40_000 }, limit)).ids,
        `filtered range, ${limit}`,
      ).toEqual(newestFirst(revoked.filter((e) => inRange.includes(e))));
      expect((await allPages({ accountId, to: T0 + 20_000 }, limit)).ids, `to, ${limit}`).toEqual(
        newestFirst(entries.filter((e) => e.at <= T0 + 20_000)),
      );
    }
    // A full page is full while more remain: 60 entries in pages of 25 are 25, 25, 10.
    expect((await allPages({ accountId, to: T0 + 60_000 }, 25)).sizes.filter((n) => n > 0)).toEqual([25, 25, 10]);
  });

  it('refuses a cursor of another shape', async () => {
    await expect(listAuditEntries({ accountId: 'acc_x' }, 10, { PK: 'x', SK: 'y' })).rejects.toMatchObject({ code: 'INVALID_CURSOR' });
  });
});
