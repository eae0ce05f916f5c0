import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { auditEntry } from '../../shared/db/audited.ts';
import { type AuditEntry, auditItem, auditPut, listAuditEntries } from '../../shared/db/entities/audit.ts';
import { migrate } from '../../shared/db/migrations/index.ts';
import { useOwnTable } from '../support/engine.ts';

// Audit entries written before the log's 8 shards (issue 41, finding 13): under `AUDIT#<account>` and
// `AUDITBY#<account>#<userId>` they were in no list after the upgrade, and `migrate` had no step for
// them. It moves each to its shard; the lists then show each once; a second run moves nothing.

beforeAll(async () => {
  await useOwnTable();
});

const accountId = `acc_${randomBytes(8).toString('hex')}`;
const userId = `usr_${randomBytes(8).toString('hex')}`;

/** An entry as written before the shards: today's item under the unsharded keys. */
async function oldEntry(e: AuditEntry, keepNew = false) {
  const today = auditItem(e);
  const old = {
    ...today,
    PK: `AUDIT#${e.accountId}`,
    ...(today.GSI1PK ? { GSI1PK: `AUDITBY#${e.accountId}#${e.actor.userId}` } : {}),
  };
  await db().send(new PutCommand({ TableName: tableName(), Item: old }));
  // Kept: an entry already written under the new key (the newer one wins).
  if (keepNew) await db().send(new TransactWriteCommand({ TransactItems: [auditPut(e)] }));
  return old;
}

const entries = (n: number, now = Date.now()) =>
  Array.from({ length: n }, (_, i) =>
    auditEntry(
      i % 3 === 2 ? { accountId, kind: 'operator' } : { accountId, userId },
      'key.created',
      { type: 'key', id: `k${i}` },
      { i },
      now - (n - i) * 1000,
    ),
  );
const ids = (items: AuditEntry[]) => items.map((e) => e.auditId);
const oldItems = async () =>
  ((await db().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true }))).Items ?? []).filter(
    (i) => i.type === 'audit' && i.PK === `AUDIT#${i.accountId}`,
  );

describe('migrate: audit entries from before the shards', () => {
  it('moves each to its shard: in the account list and its actor list, once, with every field; idempotent', async () => {
    const written = entries(9);
    for (const e of written) await oldEntry(e);
    const kept = entries(1, Date.now() + 60_000)[0] as AuditEntry;
    await oldEntry(kept, true);
    // An approval's own history record is also `type: 'audit'`: not the account's log, untouched.
    const record = { PK: `ACC#${accountId}#AP#ap_1`, SK: 'AUDIT#01j', type: 'audit', accountId };
    await db().send(new PutCommand({ TableName: tableName(), Item: record }));

    const before = await listAuditEntries({ accountId }, 100);
    expect(ids(before.items)).toEqual([kept.auditId]);

    const dry = await migrate({ dryRun: true });
    expect(dry.moved['audit entries']).toBe(10);
    expect(await oldItems()).toHaveLength(10);

    const done = await migrate({ ratePerSecond: 1000 });
    expect(done).toMatchObject({ superseded: 1, cursor: null });
    expect(done.moved['audit entries']).toBe(9);
    expect(await oldItems()).toEqual([]);

    const newestFirst = [kept, ...written].sort((a, b) => b.at - a.at);
    const all = await listAuditEntries({ accountId }, 100);
    expect(all.items).toEqual(newestFirst);
    const byActor = await listAuditEntries({ accountId, actor: userId }, 100);
    expect(ids(byActor.items)).toEqual(ids(newestFirst.filter((e) => e.actor.userId === userId)));
    // Small pages walk the shards with the cursor: each once.
    const walked: string[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await listAuditEntries({ accountId }, 2, startKey);
      walked.push(...ids(page.items));
      startKey = page.lastKey;
    } while (startKey);
    expect(walked).toEqual(ids(newestFirst));
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: record.PK, SK: record.SK } }))).Item).toEqual(record);

    const again = await migrate({ ratePerSecond: 1000 });
    expect(again.moved['audit entries']).toBe(0);
    await db().send(new DeleteCommand({ TableName: tableName(), Key: { PK: record.PK, SK: record.SK } }));
  });
});
