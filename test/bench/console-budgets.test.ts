import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { handler as readPages } from '../../functions/http/console/read.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { BODIES } from '../../shared/console/asset-bodies.generated.ts';
import { ASSET } from '../../shared/console/asset-names.generated.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { bundle, KIB } from './bundles.ts';
import { describeSteps, instrumentClients, recordCalls, sequentialSteps } from './counting.ts';

/**
 * The console's budgets (docs/performance.md "The console"): each of its three functions' bundles
 * within its own budget, a first load (the page and every asset, compressed) within 60 KiB, and a
 * bounded number of DynamoDB calls per page view, counted on the emulators, each page viewed through
 * the function that serves it (its router adds none). Counts and bytes only, never times.
 */

/**
 * The console's functions hold all of their pages (measured 1,125.8, 1,133.1 and 773.5 KiB): one cold
 * start for a whole session of pages instead of one a page (docs/performance.md "The console's cold
 * starts"). Read: every GET page (the editor and the graphs among them); change: every form that
 * changes things, and the editor's "Test run", which holds the engine's step loop (and the S3 and KMS
 * clients its step modules import, unused by a test run: 276 KiB in all), and a request's replay (the
 * trigger's start); secrets: the channels' adapters and SES. Read grew 24 KiB with the overview's hour
 * counts, the inbound log's pages, the reviewer pages' facts and the key-or-session authentication; 6.4 KiB
 * more (1,126.9 → 1,133.3) with the approvals inbox's decisions (its rows' and bulk buttons, the summary, the deadline
 * order) and the navigation's count, the stylesheet's rules for them included: its budget rose to 1,140 (change:
 * 1,133.9 → 1,136.6 with the inbox's decide form, within its own). Read: 14.9 KiB more (1,133.3 → 1,148.2)
 * with the run page that does not mislead (its real-time axis and zoom, the graph's statuses and links,
 * the iteration browser and its read, who cancelled; their stylesheet rules).
 *
 * The workflow editor's code editor (issue 44 item 7): read serves the console's assets, so it holds the
 * editor's script as a string (CodeMirror, 383 KiB minified): 1,148.2 → 1,539.5 with both, budget 1,560 (a string
 * costs its bytes at load, little parse time); change 1,136.6 → 1,141.3 with the errors' plain wording
 * (shared/schemas/wording.ts) and the editor's "Line N" and last-valid-graph view, budget 1,145.
 */
const BUDGET_KIB: Record<string, number> = { 'http/console/read': 1560, 'http/console/change': 1145, 'http/console/secrets': 780 };
const FIRST_LOAD_KIB = 60;

type Result = { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
const view = async (handler: (e: never, c: never) => Promise<unknown>, path: string, cookie?: string, params?: Record<string, string>) => {
  const event = apiEvent({ path, headers: { 'accept-encoding': 'gzip, deflate, br' }, ...(params ? { params } : {}) });
  if (cookie) event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const bytesOf = (r: Result) => Buffer.byteLength(r.body ?? '', r.isBase64Encoded ? 'base64' : 'utf8');
const gzipped = (name: string) => gzipSync(BODIES[name]?.body ?? '', { level: 9 }).length;
/** The editor's script (CodeMirror, `editor.js`): only the editor pages load it, so it is outside every other page's first load. */
const EDITOR_SCRIPT = (ASSET['editor.js'] as string).split('/').pop() as string;
/** Measured 123.1 KiB compressed (CodeMirror's view, state, commands, language, JSON, completion and lint, the schema and our help). */
const EDITOR_SCRIPT_KIB = 125;
const EDITOR_PAGES = new Set(['/console/workflows/new', '/console/workflows/{workflow}/edit']);
const assetsGzipped = Object.keys(BODIES)
  .filter((name) => name !== EDITOR_SCRIPT)
  .reduce((n, name) => n + gzipped(name), 0);

let session: string;
const ids = { run: '', workflow: '', webhook: '' };
beforeAll(async () => {
  await instrumentClients();
  const account = await givenAccount();
  session = await sessionOf(account.admin.email);
  const workflow = await createWorkflow(
    { accountId: account.account.accountId, userId: account.admin.userId, role: 'admin' },
    { name: 'Budget', definition: { steps: [{ id: 'note', type: 'set', values: { done: true } }] }, recovery: false, editors: [] },
  );
  const run = await startRun({ workflow, trigger: 'api', variables: { env: 'budget' }, startedBy: account.admin.userId });
  ids.workflow = workflow.workflowId;
  ids.run = run.execution.executionId;
  const admin = {
    kind: 'session' as const,
    accountId: account.account.accountId,
    userId: account.admin.userId,
    role: 'admin' as const,
    sessionId: 's',
  };
  // On a workflow of its own: the workflow page above is measured without webhooks.
  const hooked = await createWorkflow(admin, {
    name: 'Hooked',
    definition: { steps: [{ id: 'note', type: 'set', values: {} }] },
    recovery: false,
    editors: [],
  });
  const hook = await createWebhook(admin, {
    workflowId: hooked.workflowId,
    name: 'Budget hook',
    secretKey: 'x'.repeat(32),
    allowedSourceIps: [],
    enabled: true,
  });
  ids.webhook = hook.webhookId;
  // The setup's own batched counts (the run's start in its hour) are written now, not by the first page measured.
  await flushCounts();
}, 60_000);

/**
 * Each page view: its DynamoDB calls at most, in at most so many sequential steps (a step: calls sent
 * together). Every signed-in page starts with the session's three reads (the session, then its user
 * and account together). The lists read a sharded index (4 run-listing shards, 16 + 1 approval-status
 * shards: docs/data-model.md) one Query per shard, then one BatchGet.
 */
const PAGES = [
  { path: '/console/login', calls: 0, steps: 0 },
  // + the hour counts (1 Query), the last failed runs (4 Queries, 1 BatchGet), pending approvals (17 Queries, 1 BatchGet), workflow names (1 BatchGet)
  { path: '/console', calls: 28, steps: 5 },
  // + 4 Queries, 1 BatchGet of the rows, 1 Query of the workflow filter's choices
  { path: '/console/runs', calls: 10, steps: 4 },
  // + the run, its events, artifacts and deliveries together; the workflow's name and version
  { path: '/console/runs/{run}', calls: 9, steps: 4 },
  // + 17 Queries, 1 BatchGet of the approvals, 1 BatchGet of their runs and workflows
  { path: '/console/approvals', calls: 22, steps: 5 },
  // + 1 Query
  { path: '/console/workflows', calls: 4, steps: 3 },
  // + the workflow, its webhooks, schedules, 4 run shards, its latest versions and the account's users (their authors) together;
  // the runs' BatchGet (and the webhooks' BatchGet when the account has any: the one below)
  { path: '/console/workflows/{workflow}', calls: 14, steps: 4 },
  // the editor: nothing more for a new workflow; + the workflow to edit
  { path: '/console/workflows/new', calls: 3, steps: 2 },
  { path: '/console/workflows/{workflow}/edit', calls: 4, steps: 3 },
  // + the workflow, a page of its versions and the account's users together (a diff: + two version reads)
  { path: '/console/workflows/{workflow}/versions', calls: 6, steps: 3 },
  // + the webhooks (1 Query, 1 BatchGet), each one's stats (1 GetItem each, together), their workflows' names (1 BatchGet)
  { path: '/console/webhooks', calls: 7, steps: 6 },
  // + the workflow choices (1 Query) and my keys (1 Query and its BatchGet, the account's membership generations) together
  { path: '/console/webhooks/new', calls: 7, steps: 4 },
  // + the webhook and its stats; its workflow's name; 4 run shards and their BatchGet
  { path: '/console/webhooks/{webhook}', calls: 13, steps: 6 },
] as const;

describe('console page views', () => {
  it.each(PAGES)(
    '$path: at most $calls DynamoDB calls in $steps sequential steps, no Scan; the first load within 60 KiB compressed',
    async ({ path, calls, steps }) => {
      const concrete = path.replace('{run}', ids.run).replace('{workflow}', ids.workflow).replace('{webhook}', ids.webhook);
      const params: Record<string, string> | undefined = path.includes('{run}')
        ? { executionId: ids.run }
        : path.includes('{workflow}')
          ? { workflowId: ids.workflow }
          : path.includes('{webhook}')
            ? { id: ids.webhook }
            : undefined;
      const { result, calls: made } = await recordCalls(() => view(readPages, concrete, session, params));
      expect(result.statusCode, result.body).toBe(200);
      const dynamo = made.filter((c) => c.service === 'dynamodb');
      const order = describeSteps(sequentialSteps(dynamo));
      expect(dynamo.length, order).toBeLessThanOrEqual(calls);
      expect(sequentialSteps(dynamo).length, order).toBeLessThanOrEqual(steps);
      expect(
        dynamo.map((c) => c.command),
        order,
      ).not.toContain('Scan');
      console.info(
        `${path}: ${dynamo.length} calls in ${sequentialSteps(dynamo).length} steps; ${bytesOf(result)} bytes compressed (${order})`,
      );
      expect(result.headers?.['content-encoding']).toBe('gzip');
      expect((bytesOf(result) + assetsGzipped) / KIB).toBeLessThanOrEqual(FIRST_LOAD_KIB);
      // The editor's script: referenced by the editor pages alone, within its own budget.
      const html = gunzipSync(Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8')).toString('utf8');
      expect(html.includes(ASSET['editor.js']), path).toBe(EDITOR_PAGES.has(path));
      if (EDITOR_PAGES.has(path)) expect(gzipped(EDITOR_SCRIPT) / KIB).toBeLessThanOrEqual(EDITOR_SCRIPT_KIB);
    },
  );
});

describe('console bundles', () => {
  const functions = [...new Set((routes as readonly Route[]).filter(isConsolePage).map((r) => r.handler))];
  it('are three', () => expect([...functions].sort()).toEqual(Object.keys(BUDGET_KIB).sort()));
  it.each(functions)('%s stays within its budget', async (handler) => {
    const { bytes } = await bundle(handler);
    console.info(`${handler}: ${(bytes / KIB).toFixed(1)} KiB`);
    expect(bytes / KIB).toBeLessThanOrEqual(BUDGET_KIB[handler] as number);
  });
});
