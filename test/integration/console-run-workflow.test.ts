import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as startPage } from '../../functions/http/console/workflows/start.ts';
import { handler as testRunPage } from '../../functions/http/console/workflows/test-run.ts';
import { handler as validatePage } from '../../functions/http/console/workflows/validate.ts';
import { db, tableName } from '../../shared/clients.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { pageAudit } from '../../shared/domain/audit.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * "Run workflow" and the editor's "Test run" through their handlers on the emulators: a start with the
 * form's key (twice: one run), on the audit log; refused values, a missing key, a key reused with other
 * values and another account's workflow start nothing; a test run of a draft writes nothing.
 */

type Result = { statusCode: number; headers?: Record<string, string>; body?: string };
type Handler = (e: never, c: never) => Promise<unknown>;

const post = async (
  handler: Handler,
  path: string,
  cookie: string,
  form: Record<string, string>,
  opts: { params?: Record<string, string>; htmx?: boolean; csrf?: boolean } = {},
) => {
  const event = apiEvent({
    method: 'POST',
    path,
    headers: {
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/x-www-form-urlencoded',
      ...(opts.htmx ? { 'hx-request': 'true' } : {}),
    },
    body: new URLSearchParams({ ...(opts.csrf === false ? {} : { csrf: csrfToken(cookie) }), ...form }).toString(),
    sourceIp: freshIp(),
    ...(opts.params ? { params: opts.params } : {}),
  });
  event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const text = (html = '') =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** Every item of an account (its partitions, and any item naming it). */
async function accountItems(accountId: string) {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new ScanCommand({
        TableName: tableName(),
        FilterExpression: 'contains(PK, :acc) OR accountId = :acc',
        ExpressionAttributeValues: { ':acc': accountId },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items
    .map((i) => `${i.PK} ${i.SK}`)
    .filter((k) => !k.startsWith('SESSION') && !k.includes('RATE'))
    .sort();
}
const runItems = async (accountId: string) => (await accountItems(accountId)).filter((k) => k.includes('EX'));

let a: Awaited<ReturnType<typeof givenAccount>>;
let other: Awaited<ReturnType<typeof givenAccount>>;
let admin: string;
let workflowId: string;
const DEF = {
  variables: { env: { type: 'string', default: 'staging' }, count: { type: 'number' }, tags: { type: 'array', default: [] } },
  steps: [{ id: 'only', type: 'set', values: {} }],
};

beforeAll(async () => {
  [a, other] = await Promise.all([givenAccount(), givenAccount()]);
  admin = await sessionOf(a.admin.email);
  const w = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'Deploy', definition: WorkflowDefinition.parse(DEF), recovery: false, editors: [] },
  );
  workflowId = w.workflowId;
}, 60_000);

const start = (form: Record<string, string>, id = workflowId, csrf = true) =>
  post(startPage, `/console/workflows/${id}/run`, admin, form, { params: { workflowId: id }, csrf });

describe('Start run', () => {
  it('starts one run per form key, as the signed-in user, with the typed values, on the audit log', async () => {
    const form = { idempotencyKey: 'k-one', 'var-env': 'prod', 'var-count': '3', 'var-tags': '["a"]' };
    const [first, second] = await Promise.all([start(form), start(form)]);
    expect(first.statusCode, first.body).toBe(303);
    expect(second.headers?.location).toBe(first.headers?.location);
    const executionId = String(first.headers?.location ?? '')
      .split('/')
      .pop() as string;
    const run = await getExecution(a.account.accountId, executionId);
    expect(run).toMatchObject({ workflowId, trigger: 'api', startedBy: a.admin.userId, variables: { env: 'prod', count: 3, tags: ['a'] } });
    const reader = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: 's' } as const;
    const audit = await pageAudit(reader, { action: 'run.started' }, 25, undefined, { settled: false });
    const entries = audit.items.filter((e) => e.details?.executionId === executionId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ channel: 'console', object: { type: 'workflow', id: workflowId, name: 'Deploy', version: 1 } });
  });

  it('refused values, a missing or reused key, no CSRF token and another account start nothing', async () => {
    const before = await runItems(a.account.accountId);
    const bad = await start({ idempotencyKey: 'k-two', 'var-count': 'x', 'var-tags': '{}' });
    expect(bad.statusCode).toBe(400);
    expect(text(bad.body)).toContain('must be a number, such as 42 or -1.5');
    expect(text(bad.body)).toContain('must be an array in JSON');
    const missing = await start({ 'var-count': '1' });
    expect(missing.statusCode).toBe(400);
    expect(text(missing.body)).toContain('This form lacked its one-time key');
    const noCsrf = await start({ idempotencyKey: 'k-three', 'var-count': '1' }, workflowId, false);
    expect(noCsrf.statusCode).toBe(403);
    const foreign = await createWorkflow(
      { accountId: other.account.accountId, userId: other.admin.userId, role: 'admin' },
      { name: 'Theirs', definition: WorkflowDefinition.parse(DEF), recovery: false, editors: [] },
    );
    expect((await start({ idempotencyKey: 'k-four', 'var-count': '1' }, foreign.workflowId)).statusCode).toBe(404);
    expect(await runItems(a.account.accountId)).toEqual(before);
    expect(await runItems(other.account.accountId)).toEqual([]);
    // The key of a run started with other values: a fresh form, 409, nothing more started.
    expect((await start({ idempotencyKey: 'k-five', 'var-count': '1' })).statusCode).toBe(303);
    const started = await runItems(a.account.accountId);
    const reused = await start({ idempotencyKey: 'k-five', 'var-count': '2' });
    expect(reused.statusCode).toBe(409);
    expect(text(reused.body)).toContain('This form already started a run with other values');
    expect(reused.body).not.toContain('value="k-five"');
    expect(await runItems(a.account.accountId)).toEqual(started);
  });
});

describe("the editor's Test run", () => {
  const draft = {
    variables: { n: { type: 'number', default: 1 } },
    steps: [
      { id: 'first', type: 'set', values: { doubled: '{% $vars.n * 2 %}' } },
      { id: 'call', type: 'http_request', url: 'https://example.com/hook', when: '{% $vars.n > 5 %}' },
    ],
    output: '{% $vars.doubled %}',
  };
  it('runs the draft with the sample, writing nothing: the editor with the result, or (htmx) the check and the result alone', async () => {
    const before = await accountItems(a.account.accountId);
    const form = { name: 'Deploy', definition: JSON.stringify(draft), workflowId, version: '1', testInput: '{"n": 4}' };
    const page = await post(testRunPage, '/console/workflows/test', admin, form);
    expect(page.statusCode, page.body).toBe(200);
    expect(text(page.body)).toContain('Test run: SUCCEEDED');
    expect(page.body).toContain('<title>Edit Deploy · Flowgate</title>');
    const fragment = await post(testRunPage, '/console/workflows/test', admin, { ...form, testInput: '{"n": 9}' }, { htmx: true });
    expect(fragment.body).not.toContain('<html');
    expect(text(fragment.body)).toContain('Test run: FAILED');
    expect(text(fragment.body)).toContain('MOCK_MISSING');
    expect(text(fragment.body)).toContain('first → call');
    const refused = await post(testRunPage, '/console/workflows/test', admin, { ...form, testInput: '{"n": "x"}' }, { htmx: true });
    expect(text(refused.body)).toContain('Sample input.n: must be a number');
    expect(await accountItems(a.account.accountId)).toEqual(before);
  });

  it("keeps a shown result from the live check of the same text (its answer, 204, swaps nothing); other text's check replaces it", async () => {
    const form = { name: 'Deploy', definition: JSON.stringify(draft), workflowId, version: '1', testInput: '{"n": 4}' };
    const fragment = await post(testRunPage, '/console/workflows/test', admin, form, { htmx: true });
    // The result carries the digest of the text it ran, in the editor's form (a hidden field).
    const tested = /<input type="hidden" name="tested" value="([^"]+)"\/?>/.exec(fragment.body as string)?.[1] as string;
    expect(tested).toMatch(/^[\w-]{43}$/);
    const same = await post(validatePage, '/console/workflows/validate', admin, { ...form, tested }, { htmx: true });
    expect(same.statusCode).toBe(204);
    expect(same.body).toBe('');
    const edited = JSON.stringify({ ...draft, output: '{% $vars.n %}' });
    const other = await post(validatePage, '/console/workflows/validate', admin, { ...form, definition: edited, tested }, { htmx: true });
    expect(other.statusCode).toBe(200);
    expect(text(other.body)).toContain('No errors: the definition is valid');
    expect(other.body).not.toContain('Test run:');
    // Another account's workflow: 404, whatever the digest.
    const stranger = await sessionOf((await givenAccount()).admin.email);
    expect((await post(validatePage, '/console/workflows/validate', stranger, { ...form, tested }, { htmx: true })).statusCode).toBe(404);
  });
});
