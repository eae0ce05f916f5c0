import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.ts';

/**
 * The test projects (vitest.config.ts): `unit` starts no emulator and its files reach for none;
 * `emulated` and `emulated-own-modules` share the emulators and the setup, the second for the files that
 * need modules of their own; together they run every test file exactly once (CI runs them all, so nothing twice).
 */

const ROOT = join(import.meta.dirname, '../..');
type Project = { test: { name: string; include?: string[]; exclude?: string[]; globalSetup?: string[]; setupFiles?: string[] } };
const projects = (config.test?.projects ?? []) as Project[];
const project = (name: string) => projects.find((p) => p.test.name === name)?.test;

const testFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(`${dir}/${e.name}`) : e.name.endsWith('.test.ts') ? [`${dir}/${e.name}`] : [],
  );

/** What only a file run with the emulators may import: the helpers that start or use them. */
const NEEDS_EMULATORS =
  /from '\.\.\/support\/(global-setup|setup|fixtures|engine|local-stack|local-process|sessions)\.ts'|inject\('emulatorEnv'\)/;

describe('the test projects', () => {
  const unit = project('unit');
  const emulated = project('emulated');
  const own = project('emulated-own-modules');

  it('has a unit project without global setup (no emulator starts) and an emulated one with it', () => {
    expect(unit?.globalSetup ?? []).toEqual([]);
    expect(unit?.setupFiles).toEqual(['test/support/unit-setup.ts']);
    expect(emulated?.globalSetup).toEqual(['test/support/global-setup.ts']);
    expect(own?.globalSetup).toEqual(emulated?.globalSetup);
    expect(own?.setupFiles).toEqual(emulated?.setupFiles);
    expect(readFileSync(join(ROOT, 'test/support/unit-setup.ts'), 'utf8')).not.toMatch(/emulators|global-setup|inject\(/);
  });

  it("puts every test file in exactly one project: the unit project's by name, the rest in the emulated one", () => {
    const all = testFiles('test').sort();
    const inUnit = (unit?.include ?? []).filter((f) => all.includes(f));
    expect(inUnit).toEqual(unit?.include);
    expect(emulated?.include).toEqual(['test/**/*.test.ts']);
    expect(emulated?.exclude).toEqual([...(unit?.include ?? []), ...(own?.include ?? [])]);
    expect((own?.include ?? []).filter((f) => !all.includes(f) || inUnit.includes(f))).toEqual([]);
    expect(inUnit.length).toBeGreaterThan(40);
  });

  it("gives every file that mocks a module (vi.mock, vi.doMock) modules of its own: the others share a worker's", () => {
    const mocking = testFiles('test').filter((f) => /\bvi\.(mock|doMock)\(/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((f) => !own?.include?.includes(f))).toEqual([]);
  });

  it('runs in the unit project only files that import no helper of the emulators', () => {
    const reaching = (unit?.include ?? []).filter((f) => NEEDS_EMULATORS.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(reaching).toEqual([]);
    // The check sees such an import where there is one.
    expect(NEEDS_EMULATORS.test(readFileSync(join(ROOT, 'test/integration/console-read-models.test.ts'), 'utf8'))).toBe(true);
  });
});
