import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeTrace } from '../../infra/cli/decode-trace.ts';
import { sourceMapOf } from '../../infra/constructs/bundling.ts';
import { RouteFunction } from '../../infra/constructs/route-function.ts';

// Production bundles run without --enable-source-maps, and their maps stay out of the function's
// asset: a synth leaves them in the cloud assembly for decoding a stack trace (docs/deploying.md).
describe('source maps', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'flowgate-maps-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  // Real bundling (local esbuild), of one small function.
  const app = new App({ outdir });
  const stack = new Stack(app, 'maps');
  new RouteFunction(stack, 'Health', { handler: 'http/health/get' });
  const template = Template.fromStack(stack);
  const assets = readdirSync(outdir).filter((d) => d.startsWith('asset.'));

  it('are not enabled: no function has NODE_OPTIONS --enable-source-maps', () => {
    const [fn] = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(JSON.stringify(fn?.Properties.Environment ?? {})).not.toContain('enable-source-maps');
  });

  it("are not in the function's asset: the bundle alone, with no sourceMappingURL", () => {
    expect(assets).toHaveLength(1);
    const dir = join(outdir, assets[0]!);
    expect(readdirSync(dir)).toEqual(['index.mjs']);
    expect(readFileSync(join(dir, 'index.mjs'), 'utf8')).not.toContain('sourceMappingURL');
  });

  it('are kept in the cloud assembly, and decode a position of the bundle back to our source', () => {
    const file = sourceMapOf(outdir, 'http/health/get');
    expect(existsSync(file)).toBe(true);
    const payload = JSON.parse(readFileSync(file, 'utf8'));
    expect(payload.sources.some((s: string) => s.endsWith('functions/http/health/get.ts'))).toBe(true);
    // The bundle's handler export, found by its source's position: the map names the module it came from.
    const bundle = readFileSync(join(outdir, assets[0]!, 'index.mjs'), 'utf8');
    const lines = bundle.split('\n');
    const map = new SourceMap(payload);
    const decoded = lines.flatMap((line, i) =>
      [...line.matchAll(/handler/g)].map((m) => map.findEntry(i, m.index ?? 0)).filter((e) => 'originalSource' in e),
    );
    expect(decoded.some((e) => 'originalSource' in e && String(e.originalSource).endsWith('functions/http/health/get.ts'))).toBe(true);
    // A stack trace's frame (lines and columns from 1), as Lambda logs it, decoded by infra/cli/decode-trace.ts.
    const line = lines.findIndex((l) => l.includes('handler'));
    const column = lines[line]!.indexOf('handler');
    const entry = map.findEntry(line, column);
    const trace = `Error: boom\n    at handler (file:///var/task/index.mjs:${line + 1}:${column + 1})\n    at node:internal/x:1:1`;
    const out = decodeTrace(trace, payload);
    expect(out).toContain(`${'originalSource' in entry ? String(entry.originalSource).replace(/^(\.\.\/)+/, '') : '?'}:`);
    expect(out).not.toContain('index.mjs');
    expect(out).toContain('node:internal/x:1:1');
  });
});
