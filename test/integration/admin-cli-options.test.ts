import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '../../shared/clients.ts';
import { getAccount, setPlan } from '../../shared/db/entities/account.ts';
import { deliveryKey, recordAttempt } from '../../shared/db/entities/delivery.ts';
import { createAccount } from '../../shared/domain/accounts.ts';
import { uniqueEmail } from '../support/fixtures.ts';
import { useOwnTable } from '../support/engine.ts';

// `npm run admin -- …` (infra/cli/admin.ts) refuses every option a command does not know, with its
// usage and exit code 2, and `--help` prints the usage and does nothing (issue 41, finding 4: a
// `--dryrun` typo ran a real migration). On a table of its own holding an item of an old key shape,
// so "did nothing" is seen: the item is still where it was.

const run = promisify(execFile);
const admin = async (...args: string[]) => {
  try {
    const { stdout, stderr } = await run('node_modules/.bin/tsx', ['infra/cli/admin.ts', ...args], { env: process.env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
};

const accountId = `acc_${randomBytes(8).toString('hex')}`;
let oldKey: { PK: string; SK: string };

beforeAll(async () => {
  await useOwnTable();
  // A delivery as written today, put back under the key it had before (ACC#<account> / DLV#<id>): what migrate moves.
  const deliveryId = `dl_${randomBytes(8).toString('hex')}`;
  const base = { deliveryId, accountId, executionId: 'ex_1', kind: 'event', channel: 'webhook', target: 'https://x.example', message: {} };
  await recordAttempt({ ...base, attempt: { at: 1, status: 500, durationMs: 5 }, tries: 1, state: 'PENDING', nextRetryAt: 2 }, 1);
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: deliveryKey(accountId, deliveryId) }));
  oldKey = { PK: `ACC#${accountId}`, SK: `DLV#${deliveryId}` };
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...Item, ...oldKey } }));
  await db().send(new DeleteCommand({ TableName: tableName(), Key: deliveryKey(accountId, deliveryId) }));
});

const stillOld = async () =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: oldKey, ConsistentRead: true }))).Item !== undefined;

describe('npm run admin: options', () => {
  it('refuses unknown options of migrate with its usage, exit code 2, and moves nothing', { timeout: 90_000 }, async () => {
    for (const args of [['--dryrun'], ['-n'], ['--dry-run', '--rate', '10', '--verbose'], ['--name', 'x'], ['extra']]) {
      const res = await admin('migrate', ...args);
      expect(res.code, `migrate ${args.join(' ')}`).toBe(2);
      expect(res.stderr).toMatch(/usage:/);
      expect(res.stdout).toBe('');
    }
    expect(await stillOld()).toBe(true);
  });

  it('--help prints the usage and does nothing, for every command and alone', { timeout: 90_000 }, async () => {
    for (const args of [['--help'], ['-h'], ['migrate', '--help'], ['migrate', '-h'], ['migrate', '--dry-run', '--help']]) {
      const res = await admin(...args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toMatch(/usage:\n {2}npm run admin -- create-account/);
      expect(res.stdout).toMatch(/--dry-run/);
    }
    expect(await stillOld()).toBe(true);

    const { account } = await createAccount(
      { name: 'Opts', plan: 'pro', email: uniqueEmail('opts'), password: 'a long password' },
      Date.now(),
      { kind: 'operator', via: { channel: 'cli' } },
    );
    const help = await admin('set-plan', '--account', account.accountId, '--plan', 'team', '--help');
    expect(help.code).toBe(0);
    expect((await getAccount(account.accountId))?.plan).toBe('pro');
    const email = uniqueEmail('opts');
    const created = await admin('create-account', '--name', 'X', '--plan', 'pro', '--email', email, '--help');
    expect(created.code).toBe(0);
    expect(created.stdout).not.toMatch(/acc_/);
  });

  it('refuses unknown options of set-plan and create-account, and an unknown command', { timeout: 90_000 }, async () => {
    const { account } = await createAccount(
      { name: 'Opts', plan: 'pro', email: uniqueEmail('opts'), password: 'a long password' },
      Date.now(),
      { kind: 'operator', via: { channel: 'cli' } },
    );
    await setPlan(account.accountId, 'pro');
    const typo = await admin('set-plan', '--acount', account.accountId, '--plan', 'team');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/--acount/);
    expect(typo.stderr).toMatch(/usage:/);
    // An option of another command is unknown to this one.
    const other = await admin('set-plan', '--account', account.accountId, '--plan', 'team', '--dry-run');
    expect(other.code).toBe(2);
    expect((await getAccount(account.accountId))?.plan).toBe('pro');

    const create = await admin('create-account', '--name', 'X', '--plan', 'pro', '--email', uniqueEmail('opts'), '--pasword-stdin');
    expect(create.code).toBe(2);
    expect(create.stderr).toMatch(/usage:/);
    const unknown = await admin('migrat');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command migrat/);
  });
});
