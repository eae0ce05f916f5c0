import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, Stage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { type BuildOptions, buildSync } from 'esbuild';
import { WORKERS } from '../../functions/bindings.ts';
import { routeFunctions } from '../route-functions.ts';

const shim = (file: string) => fileURLToPath(new URL(`./bundle-shims/${file}`, import.meta.url));

/**
 * Import paths the bundles resolve to other modules (esbuild `alias`), for a cheaper cold start:
 * - Node builtins with lazy getters load as CommonJS (`process.getBuiltinModule`). An ESM import of a
 *   builtin makes Node build a facade that reads every export once, and `node:http`'s WebSocket
 *   getters alone load undici (about 50 ms); `crypto`, `util` and `process` do the same on a smaller
 *   scale. Same module objects, only the way they are loaded differs.
 * - `@aws-sdk/credential-provider-node` (the default chain: environment, SSO, ini files, process,
 *   web identity, ECS, IMDS, with three nested SDK clients: about 100 KiB) becomes the environment
 *   alone: Lambda puts a function's credentials there. Only the bundles: local mode and the tests
 *   run from `node_modules`, unchanged.
 * - `@aws-sdk/client-s3` becomes the three parts the service uses (`shared/s3.ts`, which is loaded
 *   with `await import`: esbuild then keeps the package's whole index, about 22 KiB more).
 * - Packages that Node does itself, from its crypto, Buffer and Map: `fast-sha256` (a SHA-256 in
 *   JavaScript) and `@stablelib/base64`, as the `standardwebhooks` package uses them, and
 *   `mnemonist/lru-cache`, as the SDK's endpoint cache (DynamoDB endpoint discovery, never turned on
 *   here) uses it. About 16 KiB; test/unit/bundle-shims.test.ts compares each with the original.
 */
export const ALIASES: Record<string, string> = {
  ...Object.fromEntries(
    ['async_hooks', 'crypto', 'http', 'https', 'process', 'util'].flatMap((m) => [
      [m, shim(`node-${m}.cjs`)],
      [`node:${m}`, shim(`node-${m}.cjs`)],
    ]),
  ),
  '@aws-sdk/credential-provider-node': shim('env-credentials.ts'),
  '@aws-sdk/client-s3': shim('client-s3.mjs'),
  'fast-sha256': shim('fast-sha256.cjs'),
  '@stablelib/base64': shim('stablelib-base64.cjs'),
  'mnemonist/lru-cache': shim('lru-cache.cjs'),
};

/**
 * How every function is bundled: ESM for Node 24, minified, with an external source map and the AWS
 * SDK inside (one version, the one the tests ran against). Read by `RouteFunction` (CDK, through
 * `bundleFunction`) and by the bundle-size benchmark (`test/bench/`), so the measured bundles are the
 * deployed ones. `sourcemap: 'external'` writes the map beside the bundle without a `sourceMappingURL`
 * comment: the function runs without `--enable-source-maps` and without its map (docs/deploying.md
 * "Decoding a stack trace").
 */
const OPTIONS = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: 'external',
  mainFields: ['module', 'main'],
  // Some bundled CommonJS dependencies still call require(); ESM output has none.
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
  alias: ALIASES,
} as const satisfies BuildOptions;

/** The same settings for one entry: what a function's bundle is built with. */
export const esbuildOptions = (entry: string, outfile: string): BuildOptions => ({ ...OPTIONS, entryPoints: [entry], outfile });

/** Where a synth leaves the source maps of the bundles: `<cloud assembly>/source-maps/<handler>.mjs.map`. */
export const sourceMapOf = (assemblyDir: string, handler: string) => join(assemblyDir, 'source-maps', `${handler}.mjs.map`);

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
/** Every handler module the stack makes a function of: the route table's, the workers' and the fallback. */
const allHandlers = () => [...routeFunctions().keys(), ...Object.keys(WORKERS), 'http/fallback'];

/**
 * The bundles of one synth, built by one esbuild run with every handler as an entry point (each is
 * bundled whole, as alone; sixty runs of one entry each took two minutes of a synth, one run takes
 * seconds): `<dir>/<handler>.mjs` and its `.map`. Under node_modules/.cache, so a map's sources are
 * paths from the repository as they were when each bundle was built alone; removed when the process ends.
 */
let built: { dir: string; handlers: Set<string> } | undefined;
function bundles(handler: string) {
  if (built?.handlers.has(handler)) return built.dir;
  const handlers = new Set([...allHandlers(), ...(built?.handlers ?? []), handler]);
  const cache = join(repoRoot, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'flowgate-bundles-'));
  if (!built) process.once('exit', () => built && rmSync(built.dir, { recursive: true, force: true }));
  else rmSync(built.dir, { recursive: true, force: true });
  buildSync({
    ...OPTIONS,
    entryPoints: [...handlers].map((h) => ({ in: join(repoRoot, 'functions', `${h}.ts`), out: h })),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    logLevel: 'error',
  });
  built = { dir, handlers };
  return dir;
}

/**
 * A function's code: its bundle alone as the asset (`index.mjs`, hashed by its content), its source
 * map moved to `sourceMapOf` in the cloud assembly. Built locally with the esbuild the lock file
 * pins; a stack the synth does not bundle (`aws:cdk:bundling-stacks`, as the tests build theirs)
 * builds nothing.
 */
export function bundleFunction(scope: Construct, handler: string): lambda.Code {
  const assemblyDir = Stage.of(scope)?.outdir ?? join(repoRoot, 'cdk.out');
  return lambda.Code.fromAsset(join(repoRoot, 'functions'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never run: the local bundling below always succeeds. The handler makes each function's asset cache key its own.
      image: DockerImage.fromRegistry('local-bundling-only'),
      command: [handler],
      local: {
        tryBundle(outputDir: string) {
          const dir = bundles(handler);
          copyFileSync(join(dir, `${handler}.mjs`), join(outputDir, 'index.mjs'));
          const map = sourceMapOf(assemblyDir, handler);
          mkdirSync(dirname(map), { recursive: true });
          copyFileSync(join(dir, `${handler}.mjs.map`), map);
          return true;
        },
      },
    },
  });
}
