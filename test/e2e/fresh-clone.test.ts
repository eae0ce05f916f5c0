import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/emulators.ts';
import { missingPackages } from '../../scripts/ensure.mjs';

// The README's quick start on a fresh clone: `npm start`, then `npm test -- <one file>`, with Node and
// npm only. The first installs the dependencies (npm ci, from npm's cache where it has them: this is
// the slow test of the suite, kept to one install), both check Java, Chromium and curl (scripts/ensure.mjs),
// and each then runs. Its own file: nothing else waits for it.

const ROOT = resolve(import.meta.dirname, '../..');

/** A clone of this checkout, with its uncommitted changes (what is being tested), without node_modules. */
function freshClone(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'flowgate-clone-')), 'flowgate');
  execFileSync('git', ['clone', '-q', ROOT, dir]);
  const changed = execFileSync('git', ['ls-files', '-z', '--modified', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  for (const file of changed.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) {
      rmSync(join(dir, file), { force: true });
      continue;
    }
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  return dir;
}

/** A machine's environment with Node and npm: no node_modules on PATH, none of this test run's settings. */
function machineEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['HOME', 'USER', 'LANG', 'TMPDIR', 'npm_config_cache'];
  return {
    ...Object.fromEntries(keep.flatMap((k) => (process.env[k] === undefined ? [] : [[k, process.env[k]]]))),
    PATH: (process.env.PATH ?? '')
      .split(':')
      .filter((p) => !p.includes('node_modules'))
      .join(':'),
    // What is in npm's cache comes from there (the install is the same, only quicker).
    npm_config_prefer_offline: 'true',
    ...extra,
  };
}

/** An npm command in `cwd`, in a process group of its own, its output collected. */
function npm(cwd: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn('npm', args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    out += String(d);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code, signal) => r(code ?? (signal ? 128 : null))));
  return { child, output: () => out, exited };
}

async function until(done: () => boolean, child: ChildProcess, ms: number, what: string, output: () => string) {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The line scripts/ensure.mjs prints for Java, Chromium and curl on this machine. */
const packagesLine = (mode: 'start' | 'test') =>
  missingPackages(mode).length === 0
    ? `--- ${mode === 'test' ? 'Java 17+, Chromium and curl' : 'Java 17+'}: present, nothing to install`
    : '--- missing: ';

describe('a fresh clone', () => {
  it.skipIf(!existsSync(join(ROOT, '.git')))(
    'npm start installs the dependencies, then runs the stack; npm test -- <file> finds them installed and runs the file',
    { timeout: 900_000 },
    async () => {
      const dir = freshClone();
      try {
        expect(existsSync(join(dir, 'node_modules'))).toBe(false);
        const port = await freePort();
        const dataDir = join(dir, '.data');
        const start = npm(dir, ['start'], machineEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, SEED_DEMO: '0' }));
        try {
          await until(() => start.output().includes('ready at'), start.child, 600_000, 'npm start did not come up', start.output);
          const out = start.output();
          expect(out).toContain(packagesLine('start'));
          expect(out).toContain('--- installing the dependencies package-lock.json pins (npm ci): node_modules is missing');
          expect(out).toMatch(/--- dependencies installed in \d+ s/);
          expect(out).toContain(`Flowgate local stack ready at http://127.0.0.1:${port}`);
          expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
          // The scripts run on the node@24 the dependencies brought, whatever Node ran npm.
          expect(execFileSync(join(dir, 'node_modules', '.bin', 'node'), ['--version'], { encoding: 'utf8' })).toMatch(/^v24\./);
        } finally {
          // Ctrl-C, as in a terminal: the whole process group.
          if (start.child.exitCode === null) process.kill(-(start.child.pid as number), 'SIGINT');
          await start.exited;
        }
        expect(start.output()).toContain('SIGINT: stopping the local stack...');
        const pids = Object.values(JSON.parse(readFileSync(join(dataDir, 'emulators.json'), 'utf8')).pids) as number[];
        for (const pid of pids) expect(() => process.kill(pid, 0), `emulator ${pid} still running`).toThrow();

        const test = npm(dir, ['test', '--', 'test/unit/ensure.test.ts'], machineEnv({}));
        const code = await Promise.race([test.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 240_000).unref())]);
        if (code === 'timeout') process.kill(-(test.child.pid as number), 'SIGKILL');
        expect(code, test.output()).toBe(0);
        expect(test.output()).toContain(packagesLine('test'));
        // Installed by npm start and unchanged since: no second install.
        expect(test.output()).not.toContain('installing the dependencies');
        expect(stripVTControlCharacters(test.output())).toMatch(/Test Files\s+1 passed/);
      } finally {
        rmSync(dirname(dir), { recursive: true, force: true });
      }
    },
  );
});
