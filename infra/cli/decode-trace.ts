// Decode a stack trace of a deployed function with its source map (docs/deploying.md, "Decoding a
// stack trace"): `npx tsx infra/cli/decode-trace.ts cdk.out/source-maps/worker/execute.mjs.map < trace.txt`.
// The functions run without source maps; a synth of the release's commit writes each bundle's map
// (bundles are deterministic: the same commit and lock file give the same bundle and map).
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';

/** Every `index.mjs:<line>:<column>` of `trace` written as `<source>:<line>:<column>` (the map's; unmapped ones kept). */
export function decodeTrace(trace: string, payload: SourceMapPayload): string {
  const map = new SourceMap(payload);
  return trace.replace(/(?:file:\/\/)?[^\s()]*index\.mjs:(\d+):(\d+)/g, (whole, line: string, column: string) => {
    // Stack traces count lines and columns from 1; source maps from 0.
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    if (!('originalSource' in entry)) return whole;
    const source = entry.originalSource.replace(/^(\.\.\/)+/, '');
    const name = (entry as { name?: string }).name;
    return `${source}:${entry.originalLine + 1}:${entry.originalColumn + 1}${name ? ` (${name})` : ''}`;
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx infra/cli/decode-trace.ts <cdk.out/source-maps/<handler>.mjs.map> < trace.txt');
    process.exit(2);
  }
  process.stdout.write(decodeTrace(readFileSync(0, 'utf8'), JSON.parse(readFileSync(file, 'utf8'))));
}
