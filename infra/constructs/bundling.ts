import type { BuildOptions } from 'esbuild';

/**
 * How every function is bundled: ESM for Node 24, minified, with source maps and the AWS SDK inside
 * (one version, the one the tests ran against). Read by `RouteFunction` (CDK) and by the bundle-size
 * benchmark (`test/bench/`), so the measured bundles are the deployed ones.
 */
export const BUNDLING = {
  minify: true,
  sourceMap: true,
  target: 'node24',
  mainFields: ['module', 'main'],
  // Some bundled CommonJS dependencies still call require(); ESM output has none.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  externalModules: [] as string[],
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
  sourcemap: BUNDLING.sourceMap,
  mainFields: BUNDLING.mainFields,
  banner: { js: BUNDLING.banner },
  external: BUNDLING.externalModules,
});
