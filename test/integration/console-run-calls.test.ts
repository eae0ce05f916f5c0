import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { login } from '../../shared/domain/sessions.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { handler as runPage } from '../../functions/http/console/runs/run.ts';
import { handler as confirmPage } from '../../functions/http/console/runs/confirm.ts';
import { handler as runAction } from '../../functions/http/console/runs/action.ts';
import { handler as stepValue } from '../../functions/http/console/runs/step-value.ts';
import { type Call, instrumentClients, recordCalls, sequentialSteps } from '../bench/counting.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';

/**
 * What a view of a run's console pages costs in DynamoDB calls (in-process handlers on the emulators,
 * each view warm: the function's caches of the workflow (5 s) and of its version (for good) filled).
 * The page: the session (its record, then the user and the account), then the run, its log, its
 * artifacts and its deliveries at once.
 */

let token: string;
let executionId: string;
let stop: () => Promise<unknown>;

const page = (handler: typeof runPage, path: string, params: Record<string, string>, init: { method?: string; body?: string } = {}) => {
  const event: APIGatewayProxyEventV2 = {
    ...apiEvent({
      method: init.method ?? 'GET',
      path,
      params,
      headers: { 'accept-encoding': 'gzip', ...(init.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(init.body ? { body: init.body } : {}),
    }),
    cookies: [`flowgate_session=${token}`],
  };
  return recordCalls(
    async () => (await handler(event, lambdaContext())) as { statusCode: number; body?: string; isBase64Encoded?: boolean },
  );
};

const dynamo = (calls: Call[]) => calls.filter((c) => c.service === 'dynamodb');
const names = (calls: Call[]) =>
  sequentialSteps(dynamo(calls))
    .map((step) => step.map((c) => c.command).join('‖'))
    .join(' → ');

let given: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  await useOwnQueues();
  await instrumentClients();
  stop = startWorkers();
  given = await givenAccount();
  const workflow = await createWorkflow(
    { accountId: given.account.accountId, userId: given.admin.userId, role: 'admin' },
    {
      name: 'calls',
      definition: WorkflowDefinition.parse({
        steps: [
          { id: 'a', type: 'set', values: { x: 1 } },
          { id: 'each', type: 'for_each', items: '{% [1, 2, 3] %}', steps: [{ id: 'b', type: 'set', values: { y: '{% $item %}' } }] },
        ],
      }),
      recovery: false,
      editors: [],
    },
  );
  const started = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: given.admin.userId });
  executionId = started.execution.executionId;
  await eventually(
    () => getExecution(given.account.accountId, executionId),
    (e) => e?.status === 'SUCCEEDED',
  );
  token = (await login(given.admin.email, PASSWORD, '203.0.113.7')).token;
});
afterAll(() => stop?.());

describe("a run's console pages in DynamoDB calls", () => {
  it('the run page: 7 calls in 3 sequential steps when warm (the session 3, the run, its log, artifacts and deliveries)', async () => {
    const path = `/console/runs/${executionId}`;
    await page(runPage, path, { executionId });
    const { result, calls } = await page(runPage, path, { executionId });
    expect(result.statusCode).toBe(200);
    expect(names(calls)).toBe('GetItem → GetItem‖GetItem → GetItem‖Query‖Query‖Query');
    expect(dynamo(calls)).toHaveLength(7);
    // Sent compressed: a few KiB (the assets, cached for a year, come once).
    expect(result.isBase64Encoded).toBe(true);
    expect(Buffer.from(result.body as string, 'base64').length).toBeLessThan(8 * 1024);
  });

  it("a step's whole output: the session and the run; a confirmation page the same", async () => {
    const output = await page(stepValue, `/console/runs/${executionId}/steps/a/output`, { executionId, stepId: 'a', part: 'output' });
    expect(output.result.statusCode).toBe(200);
    expect(dynamo(output.calls)).toHaveLength(4);
    const confirm = await page(confirmPage, `/console/runs/${executionId}/rerun`, { executionId, action: 'rerun' });
    expect(confirm.result.statusCode).toBe(200);
    expect(dynamo(confirm.calls)).toHaveLength(4);
  });

  it('an action: refused without the CSRF token before anything is read of the run', async () => {
    const path = `/console/runs/${executionId}/rerun`;
    const refused = await page(runAction, path, { executionId, action: 'rerun' }, { method: 'POST', body: '' });
    expect(refused.result.statusCode).toBe(403);
    expect(dynamo(refused.calls).map((c) => c.command)).toEqual(['GetItem', 'GetItem', 'GetItem']);
    const done = await page(runAction, path, { executionId, action: 'rerun' }, { method: 'POST', body: `csrf=${csrfToken(token)}` });
    expect(done.result.statusCode).toBe(303);
    // The rerun is on the audit log once (the refused POST is not), as the signed-in admin, from the console.
    const logged = await listAuditEntries({ accountId: given.account.accountId, action: 'run.rerun', objectId: executionId }, 50);
    expect(logged.items).toEqual([
      expect.objectContaining({
        actor: { kind: 'user', userId: given.admin.userId },
        channel: 'console',
        object: { type: 'run', id: executionId },
      }),
    ]);
  });
});
