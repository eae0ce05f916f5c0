import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { LoadResult, LoadSpec } from './load-client.ts';

/** autocannon in a child process (load-client.ts), so the load generator has an event loop of its own. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'load-client.ts')], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load client exited ${code}`))));
    child.stdin.end(JSON.stringify(spec));
  });
}
