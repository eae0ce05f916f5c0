import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseDigest, releaseFiles } from '../../infra/release.ts';

// The startup sweep runs on every deployment whose release digest changed (infra/constructs/workers.ts).
describe('the release digest', () => {
  const root = mkdtempSync(join(tmpdir(), 'flowgate-release-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  write('functions/worker/execute.ts', 'export const handler = 1;');
  write('shared/engine/runs.ts', 'export const runs = 1;');
  write('infra/constructs/workers.ts', 'export const canary = "10% for 5 minutes";');
  write('package-lock.json', '{}');
  write('docs/deploying.md', '# Deploying');

  it('covers the functions, shared code, the lock file and infra/ of the repository', () => {
    const covered = releaseFiles();
    for (const f of [
      'functions/worker/execute.ts',
      'shared/engine/recovery.ts',
      'package-lock.json',
      'infra/stack.ts',
      'infra/constructs/workers.ts',
    ])
      expect(covered, f).toContain(f);
    expect(covered.some((f) => f.startsWith('docs/') || f.startsWith('test/'))).toBe(false);
  });

  it('changes with a file of infra/ (as with code or settings), not with the docs; same inputs, same digest', () => {
    const before = releaseDigest({ A: '1' }, root);
    expect(releaseDigest({ A: '1' }, root)).toBe(before);
    write('docs/deploying.md', '# Deploying, edited');
    expect(releaseDigest({ A: '1' }, root)).toBe(before);
    expect(releaseDigest({ A: '2' }, root)).not.toBe(before);
    write('infra/constructs/workers.ts', 'export const canary = "all at once";');
    const infraChanged = releaseDigest({ A: '1' }, root);
    expect(infraChanged).not.toBe(before);
    write('infra/constructs/releases.ts', 'export {};');
    expect(releaseDigest({ A: '1' }, root)).not.toBe(infraChanged);
  });
});
