import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';

// The typed-client example of docs/api.md, as a user runs it: types generated from the served document,
// the example compiled with strict TypeScript and run against the local stack.
const root = join(import.meta.dirname, '../..');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let work: string;
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('typed', { seed: true }));
  // Inside the repository (git-ignored), so that the example resolves openapi-fetch like a project would.
  work = join(root, '.test-data', `typed-client-${process.pid}-${Date.now()}`);
  mkdirSync(work, { recursive: true });
});
afterAll(async () => {
  await stack?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the typed client of docs/api.md (openapi-typescript + openapi-fetch)', () => {
  it('compiles against the generated types and runs against the local stack', { timeout: 180_000 }, async () => {
    // Asynchronous: the local stack answers from this very process.
    const run = promisify(execFile);
    const readme = readFileSync(join(root, 'docs/api.md'), 'utf8');
    const block = /<!-- typed-client example: start -->\s*```ts\n([\s\S]*?)```\s*<!-- typed-client example: end -->/.exec(readme)?.[1];
    expect(block).toBeDefined();
    writeFileSync(join(work, 'example.ts'), block as string);
    await run(bin('openapi-typescript'), [`${stack.url}/api/v1/openapi.json`, '-o', join(work, 'flowgate.d.ts')]);
    // Every record field is typed by its values: an object type that holds nothing is only the generator's
    // own top-level placeholders (no webhooks, no $defs), never a field.
    const types = readFileSync(join(work, 'flowgate.d.ts'), 'utf8');
    const empty = types.split('\n').filter((l) => l.includes('Record<string, never>'));
    expect(empty.map((l) => l.trim()).sort()).toEqual([
      'export type $defs = Record<string, never>;',
      'export type webhooks = Record<string, never>;',
    ]);
    // The main objects are named: a client can import them by name.
    for (const name of ['Execution', 'Step', 'Event', 'Approval', 'AuditEntry', 'Workflow', 'WorkflowVersion'])
      expect(types, name).toMatch(new RegExp(`\\n\\s+${name}: \\{`));
    const compile = () =>
      execFileSync(
        bin('tsc'),
        [
          '--noEmit',
          '--strict',
          '--target',
          'es2022',
          '--module',
          'esnext',
          '--moduleResolution',
          'bundler',
          '--skipLibCheck',
          '--types',
          'node',
          'example.ts',
        ],
        { cwd: work, encoding: 'utf8' },
      );
    expect(compile).not.toThrow();
    const demo = stack.demo as { apiKey: string; workflowId: string };
    const { stdout: out } = await run(process.execPath, ['--import', 'tsx', join(work, 'example.ts')], {
      cwd: root,
      env: { ...process.env, BASE: stack.url, KEY: demo.apiKey },
      encoding: 'utf8',
    });
    const printed = JSON.parse(out.trim().split('\n').at(-1) as string);
    expect(printed).toMatchObject({ workflowId: demo.workflowId, executionId: expect.stringMatching(/^ex_/), version: 1 });
    // The audit log's entries, read with the demo key (AUDIT_READ) as typed items.
    expect(printed.actions.length).toBeGreaterThan(0);
    for (const a of printed.actions) expect(a).toMatch(/^[a-z_]+\.[a-z_.]+ [a-z_]+$/);
    expect(['PENDING', 'RUNNING', 'WAITING_APPROVAL']).toContain(printed.status);
    // A type error in the example would be caught: the same compile fails on a wrong path.
    writeFileSync(join(work, 'example.ts'), (block as string).replace("'/api/v1/workflows'", "'/api/v1/workflowz'"));
    expect(compile).toThrow();
    // And a version given as text: the path's {version} is an integer.
    expect(block).toContain('version: 1 }');
    writeFileSync(join(work, 'example.ts'), (block as string).replace('version: 1 }', "version: '1' }"));
    expect(compile).toThrow();
    // And the audit page read as the NDJSON text it no longer shares its operation with.
    writeFileSync(join(work, 'example.ts'), (block as string).replace('audit.data.items.map', 'audit.data.split("\\n").map'));
    expect(compile).toThrow();
  });
});
