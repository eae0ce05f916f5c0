import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '../../shared/db/entities/audit.ts';

/**
 * Every action the audit log records is documented (issue 41, finding 14: `password.changed` was
 * written but missing from docs/audit.md). The code's list is `AUDIT_ACTIONS`: `audited` takes no
 * other action (its type), so whatever is written is in it; each of its actions is also written
 * somewhere (named outside the list). The docs' list is the table under "What is recorded".
 */
const ROOT = join(import.meta.dirname, '../..');

function documented(): string[] {
  const page = readFileSync(join(ROOT, 'docs/audit.md'), 'utf8');
  const section = page.split(/^## /m).find((s) => s.startsWith('What is recorded'));
  if (!section) throw new Error('docs/audit.md has no "What is recorded" section');
  const rows = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Object') && !l.startsWith('| ---'));
  // Only the Actions column (the second), backticked `object.verb`.
  return rows.flatMap((r) => [...(r.split('|')[2] ?? '').matchAll(/`([a-z_]+\.[a-z_]+)`/g)].map((m) => m[1] as string));
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.includes('.generated.'))
    .map((e) => join(e.parentPath, e.name));
}

describe('the audit actions', () => {
  it('are each documented in docs/audit.md, and the docs name no action that is never written', () => {
    const docs = documented();
    expect(docs.length).toBeGreaterThan(0);
    expect(new Set(docs).size, 'an action documented twice').toBe(docs.length);
    expect(
      [...AUDIT_ACTIONS].filter((a) => !docs.includes(a)),
      'written but not documented',
    ).toEqual([]);
    expect(
      docs.filter((a) => !(AUDIT_ACTIONS as readonly string[]).includes(a)),
      'documented but never written',
    ).toEqual([]);
  });

  it('are each written somewhere: named by code outside the list', () => {
    const list = join(ROOT, 'shared/db/entities/audit.ts');
    const code = [...sources('shared'), ...sources('functions'), ...sources('infra')]
      .filter((f) => f !== list)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unused = AUDIT_ACTIONS.filter((a) => !code.includes(`'${a}'`));
    expect(unused, `listed in ${relative(ROOT, list)} but never written`).toEqual([]);
  });
});
