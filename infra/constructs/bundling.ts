import { SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
 * SDK inside (one version, the one the tests ran against). Read by `RouteFunction` (CDK) and by the
 * bundle-size benchmark (`test/bench/`), so the measured bundles are the deployed ones.
 *
 * The map is written beside the bundle without a `sourceMappingURL` comment, and `RouteFunction`
 * moves it out of the function's asset (`sourceMapsOut`): the function runs without
 * `--enable-source-maps` and without its map (docs/deploying.md "Decoding a stack trace").
 */
export const BUNDLING = {
  minify: true,
  sourceMap: true,
  sourceMapMode: SourceMapMode.EXTERNAL,
  target: 'node24',
  mainFields: ['module', 'main'],
  // Some bundled CommonJS dependencies still call require(); ESM output has none.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  externalModules: [] as string[],
  esbuildArgs: { '--alias': Object.entries(ALIASES).map(([from, to]) => `${from}=${to}`) },
};

/** The same settings as esbuild options: what `NodejsFunction` passes to esbuild for one entry. */
export const esbuildOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: BUNDLING.target,
  minify: BUNDLING.minify,
  sourcemap: 'external',
  mainFields: BUNDLING.mainFields,
  banner: { js: BUNDLING.banner },
  external: BUNDLING.externalModules,
  alias: ALIASES,
});

/** Where a synth leaves the source maps of the bundles: `<cloud assembly>/source-maps/<handler>.mjs.map`. */
export const sourceMapOf = (assemblyDir: string, handler: string) => join(assemblyDir, 'source-maps', `${handler}.mjs.map`);

/**
 * The bundling hooks that move a function's source map out of its asset, to `sourceMapOf`, once
 * esbuild has written it: the asset (and its hash) is the bundle alone. With Node itself, so it works
 * wherever the local bundling does.
 */
export function sourceMapsOut(assemblyDir: string, handler: string) {
  const move =
    "const f=require('node:fs'),p=require('node:path');f.mkdirSync(p.dirname(process.argv[2]),{recursive:true});f.renameSync(process.argv[1],process.argv[2])";
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (_inputDir: string, outputDir: string) => [
      `"${process.execPath}" -e "${move}" "${join(outputDir, 'index.mjs.map')}" "${sourceMapOf(assemblyDir, handler)}"`,
    ],
  };
}
