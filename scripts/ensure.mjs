// @ts-check
// What `npm start`, `npm test` and `.ci/run` do first, on whatever Node runs npm (plain JavaScript:
// the dependencies, the node@24 the scripts run on among them, may not be installed yet):
// - the dependencies package-lock.json pins, installed as `npm ci` does when node_modules is missing
//   or does not match the lockfile;
// - Java 17+ (DynamoDB Local) and, for the tests, Chromium and curl, installed from Debian's
//   packages when missing and this user may (root, or sudo without a password); otherwise it stops
//   at once with the one command to run.
// Usage: node scripts/ensure.mjs start|test
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * Where playwright-core finds Debian's Chromium for the browser tests (test/support/console-browser.ts):
 * its headless shell (package chromium-headless-shell), the same engine without the full browser's
 * user interface, as playwright runs headless by default; about a quarter less CPU a test than
 * `/usr/bin/chromium --headless`, which is most of the browser tests' time on two cores.
 */
export const CHROMIUM = '/usr/bin/chromium-headless-shell';

/**
 * Whether a package's `os`/`cpu`/`libc` (npm's lists, `!x` excludes) admit this machine.
 * @param {string[] | undefined} list
 * @param {string | undefined} value
 */
function admits(list, value) {
  if (!Array.isArray(list) || list.length === 0) return true;
  if (list.some((x) => x === `!${value}`)) return false;
  return list.some((x) => x === value) || list.every((x) => x.startsWith('!'));
}
let libcOfThisMachine;
/** glibc or musl on Linux (npm's `libc` field), undefined elsewhere. */
function libc() {
  if (process.platform !== 'linux') return undefined;
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } } | undefined} */ (process.report?.getReport());
  libcOfThisMachine ??= report?.header?.glibcVersionRuntime ? 'glibc' : 'musl';
  return libcOfThisMachine;
}
/** @typedef {{ version?: string, integrity?: string, link?: boolean, optional?: boolean, devOptional?: boolean, os?: string[], cpu?: string[], libc?: string[] }} LockedPackage */
/** @param {LockedPackage} p */
const forThisMachine = (p) => admits(p.os, process.platform) && admits(p.cpu, process.arch) && (!p.libc || admits(p.libc, libc()));

/**
 * Why node_modules under `root` is not what `npm ci` would install from package-lock.json, or
 * undefined when it is: npm's record of what it installed (node_modules/.package-lock.json) against
 * the lockfile, package by package (version, integrity, link), each package's folder present, and
 * no package the lockfile has for this machine missing (optional ones for other platforms are).
 */
export function staleReason(root = ROOT) {
  /** @type {Record<string, LockedPackage>} */
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages ?? {};
  const hiddenFile = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(join(root, 'node_modules'))) return 'node_modules is missing';
  if (!existsSync(hiddenFile)) return 'node_modules was not installed by npm (no node_modules/.package-lock.json)';
  /** @type {Record<string, LockedPackage>} */
  const installed = JSON.parse(readFileSync(hiddenFile, 'utf8')).packages ?? {};
  for (const [path, p] of Object.entries(installed)) {
    const want = lock[path];
    if (!want) return `${path} is not in package-lock.json`;
    for (const field of /** @type {const} */ (['version', 'integrity', 'link']))
      if (want[field] !== p[field]) return `${path} is ${p[field] ?? 'without'} ${field}, package-lock.json says ${want[field] ?? 'none'}`;
    if (!existsSync(join(root, path))) return `${path} is missing`;
  }
  for (const [path, p] of Object.entries(lock)) {
    if (path === '' || installed[path]) continue;
    // Optional packages for other machines are never installed (npm's platform packages: esbuild's, biome's).
    const platformSpecific = p.os || p.cpu || p.libc;
    if (!(p.optional || p.devOptional) || (platformSpecific && forThisMachine(p))) return `${path} is not installed`;
  }
  if (!existsSync(join(root, 'node_modules', '.bin', 'node'))) return 'node_modules/.bin/node (the node@24 the scripts run on) is missing';
  return undefined;
}

/** The Java on PATH's major version, or undefined without one. */
function javaMajor() {
  const r = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  const m = /version "(\d+)(?:\.(\d+))?/.exec(`${r.stderr}${r.stdout}`);
  if (!m) return undefined;
  return m[1] === '1' ? Number(m[2]) : Number(m[1]);
}
/** @param {string} cmd */
const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/**
 * What this machine lacks for `mode`, as Debian packages with the reason for each.
 * @param {'start' | 'test'} mode
 * @param {{ javaMajor: () => number | undefined, chromium: () => boolean, curl: () => boolean }} probe
 * @returns {{ pkg: string, why: string }[]}
 */
export function missingPackages(mode, probe = { javaMajor, chromium: () => existsSync(CHROMIUM), curl: () => onPath('curl') }) {
  const missing = [];
  const java = probe.javaMajor();
  if (java === undefined || java < 17)
    missing.push({
      pkg: 'openjdk-17-jre-headless',
      why: java === undefined ? 'Java 17+ for DynamoDB Local' : `Java 17+ for DynamoDB Local (java is ${java})`,
    });
  if (mode === 'test') {
    if (!probe.chromium())
      missing.push({ pkg: 'chromium-headless-shell', why: `Chromium's headless shell at ${CHROMIUM} for the browser tests` });
    if (!probe.curl()) missing.push({ pkg: 'curl', why: "curl for the test that runs npm start's printed commands" });
  }
  return missing;
}

/**
 * How to install `pkgs`: here with apt-get (as root, or through sudo without a password), or not,
 * with the one command the user runs then.
 * @param {string[]} pkgs
 * @param {{ uid: number | undefined, apt: boolean, sudo: () => boolean }} who
 * @returns {{ can: true, sudo: boolean } | { can: false, command: string }}
 */
export function installPlan(
  pkgs,
  who = {
    uid: process.getuid?.(),
    apt: onPath('apt-get'),
    sudo: () => spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0,
  },
) {
  const list = pkgs.join(' ');
  if (!who.apt)
    return {
      can: false,
      command: `install ${list} with your system's package manager (Java 17 or later; Chromium's headless shell at ${CHROMIUM})`,
    };
  if (who.uid === 0) return { can: true, sudo: false };
  if (who.sudo()) return { can: true, sudo: true };
  return { can: false, command: `sudo apt-get update && sudo apt-get install -y ${list}` };
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {import('node:child_process').SpawnSyncOptions} opts
 */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

/**
 * The packages, or stop (exit 1) with the command that installs them.
 * @param {'start' | 'test'} mode
 */
function ensurePackages(mode) {
  const missing = missingPackages(mode);
  if (missing.length === 0) {
    console.log(`--- ${mode === 'test' ? 'Java 17+, Chromium and curl' : 'Java 17+'}: present, nothing to install`);
    return;
  }
  const pkgs = missing.map((m) => m.pkg);
  const plan = installPlan(pkgs);
  console.log(`--- missing: ${missing.map((m) => m.why).join('; ')}`);
  if (!plan.can) {
    console.error(`--- this user may not install packages. Run:\n\n    ${plan.command}\n\nthen npm ${mode} again.`);
    process.exit(1);
  }
  console.log(`--- installing ${pkgs.join(' ')} (apt-get${plan.sudo ? ' through sudo' : ''})`);
  /** @param {string[]} args */
  const apt = (args) => {
    const command = ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args];
    return plan.sudo ? run('sudo', ['-n', ...command]) : run('env', command.slice(1));
  };
  if (apt(['update', '-qq']) !== 0 || apt(['install', '-y', '-qq', ...pkgs]) !== 0) {
    console.error(`--- apt-get failed; install ${pkgs.join(' ')} and run npm ${mode} again`);
    process.exit(1);
  }
  const still = missingPackages(mode);
  if (still.length) {
    console.error(`--- still missing after apt-get: ${still.map((m) => m.why).join('; ')}`);
    process.exit(1);
  }
}

/** `npm ci` when node_modules does not match package-lock.json; never through a linked node_modules. */
function ensureDependencies() {
  const reason = staleReason();
  if (!reason) return;
  const modules = join(ROOT, 'node_modules');
  if (existsSync(modules) && lstatSync(modules).isSymbolicLink()) {
    console.error(`--- ${reason}, and node_modules is a link to ${realpathSync(modules)}: run npm ci there (or remove the link).`);
    process.exit(1);
  }
  console.log(`--- installing the dependencies package-lock.json pins (npm ci): ${reason}`);
  const started = Date.now();
  // npm_execpath / npm_node_execpath: the npm running this script and its Node (not node_modules', which npm ci replaces).
  const npm = process.env.npm_execpath;
  const args = ['ci', '--no-audit', '--no-fund', '--loglevel=error'];
  const status = npm
    ? run(process.env.npm_node_execpath || process.execPath, [npm, ...args], { cwd: ROOT })
    : run('npm', args, { cwd: ROOT });
  if (status !== 0) process.exit(status);
  console.log(`--- dependencies installed in ${Math.round((Date.now() - started) / 1000)} s`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const mode = process.argv[2];
  if (mode !== 'start' && mode !== 'test') {
    console.error('usage: node scripts/ensure.mjs start|test');
    process.exit(2);
  }
  ensurePackages(mode);
  ensureDependencies();
}
