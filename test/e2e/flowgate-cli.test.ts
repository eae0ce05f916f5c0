import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listWorkflows, listWorkflowVersions, type Workflow } from '../../shared/db/entities/workflow.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { resetConfig } from '../../shared/config.ts';
import { adminSession, givenAccount, PASSWORD } from '../support/fixtures.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';

/**
 * `flowgate` (cli/) as a person runs it, through its `bin`, against the local stack over HTTP, from a
 * temporary folder: validate, login, plan, apply, export, test (docs/workflows-as-code.md).
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let account: Awaited<ReturnType<typeof givenAccount>>;
const home = mkdtempSync(join(tmpdir(), 'flowgate-cli-'));
const sessionFile = join(home, 'config', 'session.json');

beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('flowgate-cli'));
  account = await givenAccount();
});
afterAll(async () => {
  await stack?.stop();
  rmSync(home, { recursive: true, force: true });
});

type Result = { code: number; stdout: string; stderr: string };
const flowgate = (...args: string[]) =>
  new Promise<Result>((resolve) => {
    const child = execFile(
      process.execPath,
      ['cli/bin/flowgate.mjs', ...args],
      {
        env: {
          ...process.env,
          FLOWGATE_SESSION_FILE: sessionFile,
          FLOWGATE_EMAIL: account?.admin.email ?? '',
          FLOWGATE_PASSWORD: PASSWORD,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });

const folder = (name: string) => mkdtempSync(join(home, `${name}-`));
const write = (dir: string, key: string, file: object) => writeFileSync(join(dir, `${key}.json`), `${JSON.stringify(file, null, 2)}\n`);
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const orders = (x: number) => ({
  $schema: '../schemas/workflow.schema.json',
  key: 'orders',
  name: 'Orders',
  description: 'Takes an order',
  definition: {
    variables: { amount: { type: 'number', default: 0 } },
    steps: [
      { id: 'prepare', type: 'set', values: { x, total: '{% $vars.amount * 2 %}' } },
      { id: 'wait', type: 'delay', seconds: 5 },
    ],
    notifications: [{ url: 'https://hooks.example.com/flowgate', events: ['execution.succeeded'], secret: SECRET }],
  },
});
const billing = { key: 'billing', name: 'Billing', definition: { steps: [{ id: 'only', type: 'set', values: { y: true } }] } };

const workflows = async () => (await listWorkflows(account.account.accountId, 100)).items;
const byKey = async (key: string) => (await workflows()).find((w) => w.code?.key === key) as Workflow;
const versions = async (w: Workflow) => (await listWorkflowVersions(w.accountId, w.workflowId, 100)).items.length;

describe('flowgate validate', () => {
  it('checks files offline as the server does: each error as file:line:column path message, exit 1; a valid folder exits 0', async () => {
    const dir = folder('validate');
    write(dir, 'orders', orders(1));
    writeFileSync(
      join(dir, 'broken.json'),
      [
        '{',
        '  "key": "broken",',
        '  "name": "Broken",',
        '  "definition": {',
        '    "steps": [',
        '      { "id": "a", "type": "set", "values": {}, "next": "missing" },',
        '      { "id": "b", "type": "delay", "seconds": 0 }',
        '    ]',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'other-name.json'), JSON.stringify(billing));
    writeFileSync(join(dir, 'syntax.json'), '{ "key": "syntax",\n  "name": }');
    const bad = await flowgate('validate', dir);
    expect(bad.code).toBe(1);
    const lines = bad.stdout.trim().split('\n');
    expect(lines).toContain(
      `${relative(process.cwd(), join(dir, 'broken.json'))}:6:49 definition.steps.0.next no step "missing" (a target must be a step of the same list or "$end")`,
    );
    expect(lines.some((l) => /broken\.json:7:37 definition\.steps\.1\.seconds Too small/.test(l))).toBe(true);
    expect(lines.some((l) => /other-name\.json:1:\d+ key must be the file's name/.test(l))).toBe(true);
    expect(lines.some((l) => /syntax\.json:2:11 \(file\) JSON syntax error: value expected/.test(l))).toBe(true);
    expect(lines.at(-1)).toBe('4 error(s)');

    const good = await flowgate('validate', join(dir, 'orders.json'));
    expect(good).toMatchObject({ code: 0, stdout: '1 workflow file(s) valid\n' });
  });
});

describe('flowgate login, plan, apply, export', () => {
  it('signs in and keeps the session in a file only the user can read', async () => {
    const res = await flowgate('login', '--url', stack.url);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(`Signed in to ${stack.url}/ as ${account.admin.email}`);
    expect(statSync(sessionFile).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(sessionFile, 'utf8')).token).toMatch(/^dys_/);
  });

  // Eleven runs of the CLI, a Node process each: a minute and more on two busy cores (the suite's default is 30 s).
  it('applies a folder idempotently, shows an edit as one update with its diff, prunes only what the folder lost, exports what plan calls unchanged', {
    timeout: 120_000,
  }, async () => {
    const made = await createWorkflow(adminSession(account), {
      name: 'Made in the console',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: { z: 1 } }] }),
      recovery: false,
      editors: [],
    });
    const dir = folder('apply');
    write(dir, 'orders', orders(1));
    write(dir, 'billing', billing);

    const first = await flowgate('plan', dir);
    expect(first.code, first.stderr).toBe(2);
    expect(first.stdout).toMatch(/^\+ create billing \(.*billing\.json\)$/m);
    expect(first.stdout).toMatch(/^\+ create orders \(.*orders\.json\)$/m);
    expect(first.stdout).toMatch(/Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged\.$/m);
    expect(await workflows()).toHaveLength(1);

    const applied = await flowgate('apply', dir, '--yes');
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/Applied: 2 to create, 0 to update, 0 to delete, 0 unchanged\./);
    const created = await byKey('orders');
    expect(created).toMatchObject({ name: 'Orders', version: 1, code: { key: 'orders', origin: join(dir, 'orders.json') } });

    // A second apply changes nothing and makes no version (the stored secret compared as stored).
    const again = await flowgate('apply', dir, '--yes');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged\.$/m);
    expect(await versions(created)).toBe(1);
    expect((await flowgate('plan', dir)).code).toBe(0);

    // An edit: one update, with the diff of the definition.
    write(dir, 'orders', orders(2));
    const edited = await flowgate('plan', dir);
    expect(edited.code).toBe(2);
    expect(edited.stdout.match(/^~ update/gm)).toEqual(['~ update']);
    expect(edited.stdout).toMatch(/^~ update orders \(.*orders\.json\): definition$/m);
    expect(edited.stdout).toMatch(/^ {4}-\s+"x": 1,$/m);
    expect(edited.stdout).toMatch(/^ {4}\+\s+"x": 2,$/m);
    expect(edited.stdout).toMatch(/Plan: 0 to create, 1 to update, 0 to delete, 1 unchanged\./);
    expect((await flowgate('apply', dir, '--yes')).code).toBe(0);
    const updated = await byKey('orders');
    expect(updated.version).toBe(2);
    const log = await listAuditEntries({ accountId: account.account.accountId, action: 'workflow.updated' }, 10);
    expect(log.items[0]).toMatchObject({
      channel: 'cli',
      actor: { kind: 'user', userId: account.admin.userId },
      object: { id: updated.workflowId },
    });

    // --prune deletes only the workflows managed by code that the folder no longer has.
    rmSync(join(dir, 'billing.json'));
    expect((await flowgate('plan', dir)).code).toBe(0);
    const prune = await flowgate('plan', dir, '--prune');
    expect(prune.code).toBe(2);
    expect(prune.stdout.match(/^- delete .*$/gm)).toEqual([expect.stringMatching(/^- delete billing \(wf_/)]);
    expect((await flowgate('apply', dir, '--prune', '--yes')).code).toBe(0);
    expect((await workflows()).map((w) => w.name).sort()).toEqual(['Made in the console', 'Orders']);

    // Export: every workflow as a file (the console's one taken under code by a key from its name), which plan calls unchanged.
    const out = folder('export');
    const exported = await flowgate('export', out);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['made-in-the-console.json', 'orders.json']);
    const file = JSON.parse(readFileSync(join(out, 'orders.json'), 'utf8'));
    expect(file).toMatchObject({
      key: 'orders',
      name: 'Orders',
      description: 'Takes an order',
      $schema: `${stack.url}/api/v1/schemas/workflow.json`,
    });
    expect(file.definition.notifications[0].secret).toBe(`••••${SECRET.slice(-4)}`);
    expect((await byKey('made-in-the-console')).workflowId).toBe(made.workflowId);
    expect((await byKey('made-in-the-console')).version).toBe(1);
    expect(await versions(updated)).toBe(2);
    const after = await flowgate('plan', out, '--prune');
    expect(after.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to delete, 2 unchanged\.$/m);
    expect(after.code).toBe(0);
    expect((await flowgate('validate', out)).code).toBe(0);
  });

  it('refuses to apply invalid files, sending nothing (exit 1)', async () => {
    const dir = folder('invalid');
    write(dir, 'bad', { key: 'bad', name: 'Bad', definition: { steps: [] } });
    const res = await flowgate('apply', dir, '--yes');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/bad\.json:\d+:\d+ definition\.steps Too small/);
    expect(res.stderr).toMatch(/nothing was sent/);
    expect((await workflows()).some((w) => w.name === 'Bad')).toBe(false);
  });
});

describe('flowgate test', () => {
  // What a test run would send reaches this listener if anything is sent: the step allowlist lets runs reach 127.0.0.1.
  let listener: Server;
  let base: string;
  const heard: string[] = [];
  beforeAll(async () => {
    listener = createServer((req, res) => {
      heard.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"real"}');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
    resetConfig();
  });
  afterAll(() => new Promise<void>((r) => (listener ? listener.close(() => r()) : r())));

  const charge = () => ({
    key: 'charge',
    name: 'Charge',
    definition: {
      variables: { amount: { type: 'number', default: 1 } },
      steps: [
        { id: 'call', type: 'http_request', method: 'POST', url: `${base}/charge`, body: { amount: '{% $vars.amount %}' } },
        { id: 'ask', type: 'manual_approval', title: 'Refund?', reviewers: ['role:admin'] },
      ],
      output: { id: '{% $steps.call.body.id %}', decision: '{% $steps.ask.decision %}' },
    },
  });
  const test = (dir: string, name: string, file: object) => writeFileSync(join(dir, `${name}.test.json`), JSON.stringify(file, null, 2));
  const mocks = { call: { status: 200, body: { id: 'ch_1' } }, ask: { decision: 'approve' } };

  it('runs each *.test.json on mocks: a wrong expectation and an unmocked http_request fail naming the difference (exit 1), nothing is sent', async () => {
    expect((await flowgate('login', '--url', stack.url)).code).toBe(0);
    const dir = folder('tests');
    write(dir, 'charge', charge());
    const expected = { status: 'SUCCEEDED', output: { id: 'ch_1', decision: 'approve' }, path: ['call', 'ask'] };
    test(dir, 'approved', { workflow: 'charge', input: { amount: 5 }, mocks, expect: expected });
    test(dir, 'wrong', { workflow: 'charge', mocks, expect: { ...expected, output: { id: 'ch_2' } } });
    test(dir, 'unmocked', { workflow: 'charge', mocks: { ask: mocks.ask }, expect: expected });
    const res = await flowgate('test', dir);
    expect(res.code, res.stderr).toBe(1);
    const at = (name: string) => relative(process.cwd(), join(dir, `${name}.test.json`));
    expect(res.stdout.trim().split('\n')).toEqual([
      `PASS ${at('approved')} (charge: SUCCEEDED, call → ask)`,
      `FAIL ${at('unmocked')}: status: expected "SUCCEEDED", got "FAILED" (MOCK_MISSING: Step call (http_request) has no mock: a test run sends nothing and waits for no one. Add mocks.call.)`,
      `FAIL ${at('wrong')}: output.id: expected "ch_2", got "ch_1"`,
      '3 test file(s): 1 passed, 2 failed',
    ]);
    expect(heard).toEqual([]);

    // All passing: exit 0. The test files are not workflows: validate and plan leave them alone.
    rmSync(join(dir, 'wrong.test.json'));
    test(dir, 'unmocked', { workflow: 'charge', expect: { status: 'FAILED', error: { code: 'MOCK_MISSING' }, path: ['call'] } });
    const green = await flowgate('test', dir);
    expect(green.code, green.stdout).toBe(0);
    expect(green.stdout).toMatch(/^2 test file\(s\): 2 passed, 0 failed$/m);
    expect((await flowgate('validate', dir)).stdout).toBe('1 workflow file(s) valid\n');
    expect(heard).toEqual([]);
  });
});
