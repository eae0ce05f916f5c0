import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { getAccount } from '../../shared/db/entities/account.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { login } from '../../shared/domain/sessions.ts';
import { uniqueEmail } from '../support/fixtures.ts';

// The operator CLI as an operator runs it against a deployed table: TABLE_NAME and AWS settings in
// the environment (here pointing at the test emulators).
const run = promisify(execFile);
const admin = async (...args: string[]) => adminWith({}, ...args);
const adminWith = async (opts: { stdin?: string; env?: Record<string, string> }, ...args: string[]) => {
  try {
    const child = run('node_modules/.bin/tsx', ['infra/cli/admin.ts', ...args], { env: { ...process.env, ...opts.env } });
    child.child.stdin?.end(opts.stdin ?? '');
    const { stdout } = await child;
    return { code: 0, last: JSON.parse(stdout.trim().split('\n').pop() as string) };
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
};

describe('operator CLI', () => {
  it('creates an account whose admin can log in, and changes its plan', { timeout: 60_000 }, async () => {
    const email = uniqueEmail('ops');
    const created = await adminWith(
      { stdin: 'a long password\n' },
      ...['create-account', '--name', 'Acme', '--plan', 'pro', '--email', email, '--password-stdin'],
    );
    expect(created.code).toBe(0);
    expect(created.last).toEqual({ accountId: expect.stringMatching(/^acc_/), userId: expect.stringMatching(/^usr_/) });
    expect(await getAccount(created.last.accountId)).toMatchObject({ name: 'Acme', plan: 'pro' });
    expect((await login(email, 'a long password', '192.0.2.200')).user).toMatchObject({ id: created.last.userId, role: 'admin' });
    // On the new account's audit log: the operator added its admin, through the CLI.
    const log = await listAuditEntries({ accountId: created.last.accountId, action: 'member.added' }, 10);
    expect(log.items).toEqual([
      expect.objectContaining({
        actor: { kind: 'operator' },
        channel: 'cli',
        object: { type: 'member', id: created.last.userId, name: email },
      }),
    ]);

    const changed = await admin('set-plan', '--account', created.last.accountId, '--plan', 'enterprise');
    expect(changed).toEqual({ code: 0, last: { accountId: created.last.accountId, plan: 'enterprise' } });
    expect((await getAccount(created.last.accountId))?.plan).toBe('enterprise');
  });

  it('takes the password from ADMIN_PASSWORD, and never from the arguments', { timeout: 60_000 }, async () => {
    const email = uniqueEmail('ops');
    const created = await adminWith(
      { env: { ADMIN_PASSWORD: 'another long password' } },
      ...['create-account', '--name', 'Env', '--plan', 'free', '--email', email],
    );
    expect(created.code).toBe(0);
    expect((await login(email, 'another long password', '192.0.2.201')).user.id).toBe(created.last.userId);

    const argv = await admin(
      'create-account',
      '--name',
      'X',
      '--plan',
      'pro',
      '--email',
      uniqueEmail('ops'),
      '--password',
      'a long password',
    );
    expect(argv.code).toBe(2);
    expect(argv.stderr).toMatch(/--password is not accepted/);
    const none = await admin('create-account', '--name', 'X', '--plan', 'pro', '--email', uniqueEmail('ops'));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--password/);
  });

  it('refuses bad input with usage and exit code 2, and unknown accounts with 1', { timeout: 60_000 }, async () => {
    const bad = await adminWith(
      { stdin: 'short\n' },
      'create-account',
      '--name',
      'X',
      '--plan',
      'gold',
      '--email',
      'nope',
      '--password-stdin',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--plan/);
    expect(bad.stderr).toMatch(/--email/);
    expect(bad.stderr).toMatch(/usage:/);
    const unknown = await admin('set-plan', '--account', 'acc_01jzzzzzzzzzzzzzzzzzzzzzzz', '--plan', 'pro');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/does not exist/);
  });
});
