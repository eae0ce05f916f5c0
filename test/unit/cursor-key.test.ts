import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The cursor key is settled when shared/db/cursor.ts is first imported (a cold start), so each case
 * is a fresh process: it signs a cursor, or checks one given as `CHECK`, and prints the result.
 */
async function inProcess(env: Record<string, string>) {
  const script = `
    const { decodeCursor, encodeCursor } = await import('./shared/db/cursor.ts');
    console.log(process.env.CHECK ? JSON.stringify(decodeCursor(process.env.CHECK, 'list')) : encodeCursor({ PK: 'A', SK: 'B' }, 'list'));
  `;
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !['CURSOR_SECRET', 'CURSOR_SECRET_ARN', 'AWS_LAMBDA_FUNCTION_NAME'].includes(k)),
  );
  try {
    const { stdout } = await promisify(execFile)(`${repoRoot}node_modules/.bin/tsx`, ['--input-type=module', '-e', script], {
      cwd: repoRoot,
      env: { ...clean, ...env },
      timeout: 60_000,
    });
    return { out: stdout.trim(), error: '' };
  } catch (e) {
    return { out: '', error: String((e as { stderr?: string }).stderr) };
  }
}

const KEY = 'k'.repeat(48);

describe('the cursor key', () => {
  it('is the same in every process given it, so a cursor signed by one instance is accepted by another', { timeout: 120_000 }, async () => {
    const signed = await inProcess({ AWS_LAMBDA_FUNCTION_NAME: 'list', CURSOR_SECRET: KEY });
    expect(signed.out).toMatch(/^[\w-]+\.[\w-]+$/);
    const [checked, otherKey] = await Promise.all([
      inProcess({ AWS_LAMBDA_FUNCTION_NAME: 'list', CURSOR_SECRET: KEY, CHECK: signed.out }),
      inProcess({ AWS_LAMBDA_FUNCTION_NAME: 'list', CURSOR_SECRET: 'o'.repeat(48), CHECK: signed.out }),
    ]);
    expect(JSON.parse(checked.out)).toEqual({ PK: 'A', SK: 'B' });
    expect(otherKey.error).toMatch(/INVALID_CURSOR/);
  });

  it('is never made up on Lambda: a function given no key fails to sign', { timeout: 60_000 }, async () => {
    const { out, error } = await inProcess({ AWS_LAMBDA_FUNCTION_NAME: 'list' });
    expect(out).toBe('');
    expect(error).toMatch(/CURSOR_SECRET_ARN is not set/);
  });

  it('is made up per process outside Lambda (local mode, tests)', { timeout: 60_000 }, async () => {
    const signed = await inProcess({});
    expect(signed.out).toMatch(/^[\w-]+\.[\w-]+$/);
    expect((await inProcess({ CHECK: signed.out })).error).toMatch(/INVALID_CURSOR/);
  });

  it('fails the cold start when the secret named by CURSOR_SECRET_ARN cannot be read', { timeout: 60_000 }, async () => {
    const { out, error } = await inProcess({
      AWS_LAMBDA_FUNCTION_NAME: 'list',
      CURSOR_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf',
      // Nothing listens there: the read fails as a missing grant or secret would, without a fake.
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:9',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_MAX_ATTEMPTS: '1',
    });
    expect(out).toBe('');
    expect(error).toMatch(/ECONNREFUSED/);
  });
});
