import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installPlan, missingPackages, staleReason } from '../../scripts/ensure.mjs';

// What `npm start` and `npm test` check first (scripts/ensure.mjs): whether node_modules is what
// `npm ci` would install, and what to do about missing Java, Chromium and curl. The whole path, on
// a fresh clone: test/e2e/fresh-clone.test.ts.

const other = process.platform === 'linux' ? 'darwin' : 'linux';
const LOCK = {
  '': { name: 'p', version: '1.0.0' },
  'node_modules/a': { version: '1.0.0', integrity: 'sha512-a' },
  'node_modules/b': { version: '2.0.0', integrity: 'sha512-b', dev: true },
  'node_modules/node': { version: '24.0.0', integrity: 'sha512-n', dev: true },
  // A platform package for another OS: never installed here.
  [`node_modules/@x/bin-${other}`]: { version: '1.0.0', integrity: 'sha512-o', optional: true, os: [other] },
};

/** A project with package-lock.json `lock`, and node_modules as npm would leave it after installing `installed`. */
function project(lock: Record<string, object>, installed?: Record<string, object>) {
  const root = mkdtempSync(join(tmpdir(), 'flowgate-ensure-'));
  writeFileSync(join(root, 'package-lock.json'), JSON.stringify({ name: 'p', lockfileVersion: 3, packages: lock }));
  if (installed) {
    mkdirSync(join(root, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(root, 'node_modules', '.package-lock.json'), JSON.stringify({ name: 'p', lockfileVersion: 3, packages: installed }));
    for (const path of Object.keys(installed)) mkdirSync(join(root, path), { recursive: true });
    writeFileSync(join(root, 'node_modules', '.bin', 'node'), '');
  }
  return root;
}
const { '': _root, ...installedAsLocked } = LOCK;
const without = (o: Record<string, object>, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));

describe('node_modules against package-lock.json', () => {
  it('is current when npm installed exactly what the lockfile pins (platform packages of other machines left out)', () => {
    const root = project(LOCK, without(installedAsLocked, `node_modules/@x/bin-${other}`));
    expect(staleReason(root)).toBeUndefined();
    rmSync(root, { recursive: true });
  });

  it('is stale, saying why, when missing, not installed by npm, or not what the lockfile pins', () => {
    const cases: [string, string][] = [];
    const check = (root: string) => {
      const r = staleReason(root);
      rmSync(root, { recursive: true });
      return r;
    };
    cases.push([check(project(LOCK)) as string, 'node_modules is missing']);
    const bare = project(LOCK);
    mkdirSync(join(bare, 'node_modules'));
    cases.push([check(bare) as string, 'node_modules was not installed by npm (no node_modules/.package-lock.json)']);
    const installed = without(installedAsLocked, `node_modules/@x/bin-${other}`);
    // The lockfile moved on (a pull): another version, a new package, a package removed.
    cases.push([
      check(project({ ...LOCK, 'node_modules/a': { version: '1.1.0', integrity: 'sha512-a2' } }, installed)) as string,
      'node_modules/a is 1.0.0 version, package-lock.json says 1.1.0',
    ]);
    cases.push([
      check(project({ ...LOCK, 'node_modules/c': { version: '1.0.0', integrity: 'sha512-c' } }, installed)) as string,
      'node_modules/c is not installed',
    ]);
    cases.push([check(project(without(LOCK, 'node_modules/b'), installed)) as string, 'node_modules/b is not in package-lock.json']);
    // A platform package for this machine that is not there.
    cases.push([
      check(
        project(
          {
            ...LOCK,
            'node_modules/@x/bin-here': {
              version: '1',
              integrity: 'sha512-h',
              optional: true,
              os: [process.platform],
              cpu: [process.arch],
            },
          },
          installed,
        ),
      ) as string,
      'node_modules/@x/bin-here is not installed',
    ]);
    // A package's folder deleted by hand, and the node@24 the scripts run on missing.
    const deleted = project(LOCK, installed);
    rmSync(join(deleted, 'node_modules', 'b'), { recursive: true });
    cases.push([check(deleted) as string, 'node_modules/b is missing']);
    const noNode = project(LOCK, installed);
    rmSync(join(noNode, 'node_modules', '.bin', 'node'));
    cases.push([check(noNode) as string, 'node_modules/.bin/node (the node@24 the scripts run on) is missing']);
    for (const [got, want] of cases) expect(got).toBe(want);
  });
});

describe('Java, Chromium and curl', () => {
  const probe = (javaMajor: number | undefined, chromium: boolean, curl: boolean) => ({
    javaMajor: () => javaMajor,
    chromium: () => chromium,
    curl: () => curl,
  });

  it('npm start needs Java 17 or later; npm test also Chromium and curl', () => {
    expect(missingPackages('start', probe(17, false, false))).toEqual([]);
    expect(missingPackages('test', probe(21, true, true))).toEqual([]);
    expect(missingPackages('start', probe(undefined, true, true)).map((m) => m.pkg)).toEqual(['openjdk-17-jre-headless']);
    expect(missingPackages('start', probe(11, true, true))).toEqual([
      { pkg: 'openjdk-17-jre-headless', why: 'Java 17+ for DynamoDB Local (java is 11)' },
    ]);
    expect(missingPackages('test', probe(undefined, false, false)).map((m) => m.pkg)).toEqual([
      'openjdk-17-jre-headless',
      'chromium-headless-shell',
      'curl',
    ]);
  });

  it('installs as root or through passwordless sudo; otherwise names the one command to run', () => {
    const pkgs = ['openjdk-17-jre-headless', 'chromium-headless-shell'];
    let asked = 0;
    const sudo = (ok: boolean) => () => {
      asked++;
      return ok;
    };
    expect(installPlan(pkgs, { uid: 0, apt: true, sudo: sudo(false) })).toEqual({ can: true, sudo: false });
    expect(asked).toBe(0);
    expect(installPlan(pkgs, { uid: 1000, apt: true, sudo: sudo(true) })).toEqual({ can: true, sudo: true });
    expect(installPlan(pkgs, { uid: 1000, apt: true, sudo: sudo(false) })).toEqual({
      can: false,
      command: 'sudo apt-get update && sudo apt-get install -y openjdk-17-jre-headless chromium-headless-shell',
    });
    expect(installPlan(pkgs, { uid: 0, apt: false, sudo: sudo(true) })).toEqual({
      can: false,
      command:
        "install openjdk-17-jre-headless chromium-headless-shell with your system's package manager (Java 17 or later; Chromium's headless shell at /usr/bin/chromium-headless-shell)",
    });
  });
});

describe('scripts/ensure.mjs as npm start runs it', () => {
  it('stops at once, before installing anything, with the command to run when it may not install what is missing', () => {
    // A machine with Node and a shell only: no java, no apt-get, no npm on PATH.
    const root = project(LOCK);
    mkdirSync(join(root, 'scripts'));
    copyFileSync(resolve(import.meta.dirname, '../../scripts/ensure.mjs'), join(root, 'scripts', 'ensure.mjs'));
    const bin = join(root, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, 'node'));
    symlinkSync('/bin/sh', join(bin, 'sh'));
    const r = spawnSync(join(bin, 'node'), ['scripts/ensure.mjs', 'start'], { cwd: root, env: { PATH: bin }, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('--- missing: Java 17+ for DynamoDB Local');
    expect(r.stderr).toContain(
      "install openjdk-17-jre-headless with your system's package manager (Java 17 or later; Chromium's headless shell at /usr/bin/chromium-headless-shell)",
    );
    expect(r.stdout).not.toContain('npm ci');
    expect(existsSync(join(root, 'node_modules'))).toBe(false);
    rmSync(root, { recursive: true });
  });
});

describe('engines', () => {
  const ROOT = resolve(import.meta.dirname, '../..');
  const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

  it("admits only Node versions every locked package's engines admit (no EBADENGINE), and the README names them", () => {
    // npm's own semver (a dependency of the tools here): the range logic npm warns with.
    const semver = createRequire(import.meta.url)('semver') as { subset: (a: string, b: string) => boolean };
    const range = JSON.parse(read('package.json')).engines.node as string;
    const lock = JSON.parse(read('package-lock.json')).packages as Record<string, { engines?: { node?: string } }>;
    expect(lock['']?.engines?.node).toBe(range);
    // What npm installed here (optional packages for other machines, wasm32 bindings among them, are not).
    const installed = JSON.parse(read('node_modules/.package-lock.json')).packages as Record<string, unknown>;
    const narrower = Object.entries(lock).flatMap(([path, p]) =>
      path in installed && p.engines?.node && !semver.subset(range, p.engines.node) ? [`${path} ${p.engines.node}`] : [],
    );
    expect(Object.keys(installed).length).toBeGreaterThan(100);
    expect(narrower).toEqual([]);
    // The README says which, in words: change both together.
    expect(range).toBe('^20.19.0 || ^22.12.0 || >=24');
    expect(read('README.md').replace(/\s+/g, ' ')).toContain('20.19 or a later 20.x, 22.12 or a later 22.x, or 24 and later');
  });
});
