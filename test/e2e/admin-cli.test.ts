import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { getAccount } from '../../shared/db/entities/account.ts';
import { login } from '../../shared/domain/sessions.ts';
import { uniqueEmail } from '../support/fixtures.ts';

// The operator CLI as an operator runs it against a deployed table: TABLE_NAME and AWS settings in
// the environment (here pointing at the test emulators).
const run = promisify(execFile);
const admin = async (...args: string[]) => {
  try {
    const { stdout } = await run('node_modules/.bin/tsx', ['infra/cli/admin.ts', ...args], { env: process.env });
    return { code: 0, last: JSON.parse(stdout.trim().split('\n').pop() as string) };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
};

describe('operator CLI', () => {
  it('creates an account whose admin can log in, and changes its plan', { timeout: 60_000 }, async () => {
    const email = uniqueEmail('ops');
    const created = await admin('create-account', '--name', 'Acme', '--plan', 'pro', '--email', email, '--password', 'a long password');
    expect(created.code).toBe(0);
    expect(created.last).toEqual({ accountId: expect.stringMatching(/^acc_/), userId: expect.stringMatching(/^usr_/) });
    expect(await getAccount(created.last.accountId)).toMatchObject({ name: 'Acme', plan: 'pro' });
    expect((await login(email, 'a long password', '192.0.2.200')).user).toMatchObject({ id: created.last.userId, role: 'admin' });

    const changed = await admin('set-plan', '--account', created.last.accountId, '--plan', 'enterprise');
    expect(changed).toEqual({ code: 0, last: { accountId: created.last.accountId, plan: 'enterprise' } });
    expect((await getAccount(created.last.accountId))?.plan).toBe('enterprise');
  });

  it('refuses bad input with usage and exit code 2, and unknown accounts with 1', { timeout: 60_000 }, async () => {
    const bad = await admin('create-account', '--name', 'X', '--plan', 'gold', '--email', 'nope', '--password', 'short');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--plan/);
    expect(bad.stderr).toMatch(/--email/);
    expect(bad.stderr).toMatch(/usage:/);
    const unknown = await admin('set-plan', '--account', 'acc_01jzzzzzzzzzzzzzzzzzzzzzzz', '--plan', 'pro');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/does not exist/);
  });
});
