import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { deliveryKey, getDelivery, listExecutionDeliveries, recordAttempt } from '../../shared/db/entities/delivery.ts';
import { migrate } from '../../shared/db/migrations/index.ts';
import { useOwnTable } from '../support/engine.ts';

// `npm run admin -- migrate` (docs/deploying.md, "Upgrading") on a table holding items of the shape
// before (deliveries under their account's partition), as an operator runs it while the service runs.

const run = promisify(execFile);
const cli = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await run('node_modules/.bin/tsx', ['infra/cli/admin.ts', 'migrate', ...args], { env: process.env });
    return { code: 0, last: JSON.parse(stdout.trim().split('\n').pop() as string), stderr };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
};

beforeAll(async () => {
  await useOwnTable();
});

const accountId = `acc_${randomBytes(8).toString('hex')}`;
const executionId = `ex_${randomBytes(8).toString('hex')}`;
const attempt = (at: number, status: number) => ({ at, status, durationMs: 5 });

/** A delivery as it is written today, then moved back to the key it had before (ACC#<account> / DLV#<id>). */
async function oldDelivery(n: number, keepNew = false) {
  const deliveryId = `dl_${String(n).padStart(10, '0')}${randomBytes(8).toString('hex')}`;
  const base = { deliveryId, accountId, executionId, kind: 'event', channel: 'webhook', target: 'https://x.example', message: { n } };
  await recordAttempt({ ...base, attempt: attempt(1, 500), tries: 1, state: 'PENDING', nextRetryAt: 2 }, 1);
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: deliveryKey(accountId, deliveryId) }));
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...Item, PK: `ACC#${accountId}`, SK: `DLV#${deliveryId}` } }));
  // Kept: a delivery whose next attempt was recorded under the new key after the deploy.
  if (keepNew) await recordAttempt({ ...base, attempt: attempt(3, 200), tries: 2, state: 'DELIVERED' }, 3);
  else await db().send(new DeleteCommand({ TableName: tableName(), Key: deliveryKey(accountId, deliveryId) }));
  return deliveryId;
}

const oldItems = async () =>
  ((await db().send(new ScanCommand({ TableName: tableName(), ConsistentRead: true }))).Items ?? []).filter(
    (i) => i.type === 'delivery' && String(i.PK).startsWith('ACC#'),
  );

describe('npm run admin -- migrate', () => {
  it('moves deliveries to their own keys: dry run first, resumable, idempotent, the newer item kept, nothing else touched', {
    timeout: 90_000,
  }, async () => {
    const ids = [await oldDelivery(1), await oldDelivery(2), await oldDelivery(3), await oldDelivery(4)];
    const kept = await oldDelivery(5, true);
    const other = { PK: `ACC#${accountId}`, SK: 'ACCOUNT', type: 'account', accountId, name: 'untouched' };
    await db().send(new PutCommand({ TableName: tableName(), Item: other }));
    // Before: the run's list reads both shapes (the same index keys), a read by id finds only the new one.
    expect((await listExecutionDeliveries(accountId, executionId, 20)).items).toHaveLength(6);
    expect(await getDelivery(accountId, ids[0] as string)).toBeUndefined();

    const dry = await cli('--dry-run', '--rate', '1000');
    expect(dry.code).toBe(0);
    expect(dry.last).toMatchObject({ dryRun: true, moved: { deliveries: 5 }, superseded: 0, cursor: null });
    expect(await oldItems()).toHaveLength(5);

    // Stopped after two items read, then resumed from the printed cursor.
    const first = await migrate({ ratePerSecond: 1000, maxItems: 2 });
    expect(first.scanned).toBe(2);
    expect(first.cursor).toEqual(expect.any(String));
    const rest = await migrate({ ratePerSecond: 1000, from: first.cursor as string });
    expect(rest.cursor).toBeNull();
    expect((first.moved.deliveries ?? 0) + (rest.moved.deliveries ?? 0)).toBe(4);
    expect(first.superseded + rest.superseded).toBe(1);

    expect(await oldItems()).toEqual([]);
    for (const id of ids) expect(await getDelivery(accountId, id)).toMatchObject({ deliveryId: id, state: 'PENDING', tries: 1 });
    // The item written after the deploy is the one kept (its second attempt).
    expect(await getDelivery(accountId, kept)).toMatchObject({ state: 'DELIVERED', tries: 2 });
    const listed = (await listExecutionDeliveries(accountId, executionId, 20)).items.map((d) => d.deliveryId);
    expect(listed.sort()).toEqual([...ids, kept].sort());
    expect((await db().send(new GetCommand({ TableName: tableName(), Key: { PK: other.PK, SK: other.SK } }))).Item).toEqual(other);

    const again = await cli('--rate', '1000');
    expect(again).toMatchObject({ code: 0, last: { dryRun: false, moved: { deliveries: 0 }, superseded: 0, cursor: null } });
    expect(again.stderr).toMatch(/scanned \d+, moved \{"deliveries":0(,"[^"]+":0)*\}, superseded 0, cursor none \(done\)/);
  });

  it('refuses a cursor it did not print and bad numbers, with the usage', { timeout: 60_000 }, async () => {
    const bad = await cli('--from', 'not-a-cursor');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--from: not a cursor this command printed/);
    const rate = await cli('--rate', '0');
    expect(rate.code).toBe(2);
    expect(rate.stderr).toMatch(/--rate/);
  });
});
