import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as runPage } from '../../functions/http/console/runs/run.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { iterationEvents } from '../../shared/db/entities/run-events.ts';
import { readIteration } from '../../shared/domain/run-iterations.ts';
import { login } from '../../shared/domain/sessions.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { type Call, instrumentClients, recordCalls } from '../bench/counting.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';

/**
 * The run page's iteration browser reads one iteration of a `for_each` without paging the run's log:
 * from the log the page read anyway (no call more), else one filtered Query from the loop's start;
 * only that loop's steps of that iteration, and nothing of another account's run.
 */

let stop: () => Promise<unknown>;
let given: Awaited<ReturnType<typeof givenAccount>>;
let run: Execution;
let token: string;

const dynamo = (calls: Call[]) => calls.filter((c) => c.service === 'dynamodb');

beforeAll(async () => {
  await useOwnQueues();
  await instrumentClients();
  stop = startWorkers();
  given = await givenAccount();
  const workflow = await createWorkflow(
    { accountId: given.account.accountId, userId: given.admin.userId, role: 'admin' },
    {
      name: 'sixty',
      definition: WorkflowDefinition.parse({
        steps: [
          {
            id: 'each',
            type: 'for_each',
            items: '{% [1..60] %}',
            steps: [
              { id: 'b', type: 'set', values: { y: '{% $item %}' } },
              { id: 'c', type: 'set', values: { z: '{% $item * 10 %}' } },
            ],
          },
          // Another loop: its iteration 35 has the same number and is not the first loop's.
          { id: 'again', type: 'for_each', items: '{% [1..40] %}', steps: [{ id: 'd', type: 'set', values: { w: '{% $item %}' } }] },
        ],
      }),
      recovery: false,
      editors: [],
    },
  );
  const started = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: given.admin.userId });
  run = (await eventually(
    () => getExecution(given.account.accountId, started.execution.executionId),
    (e) => e?.status === 'SUCCEEDED',
  )) as Execution;
  token = (await login(given.admin.email, PASSWORD, '203.0.113.7')).token;
}, 60_000);
afterAll(() => stop?.());

const view = async (executionId: string, query: Record<string, string>, session = token) => {
  const event: APIGatewayProxyEventV2 = {
    ...apiEvent({
      method: 'GET',
      path: `/console/runs/${executionId}`,
      params: { executionId },
      query,
      headers: { 'accept-encoding': 'gzip' },
    }),
    cookies: [`flowgate_session=${session}`],
  };
  const { result, calls } = await recordCalls(
    async () => (await runPage(event, lambdaContext())) as { statusCode: number; body?: string; isBase64Encoded?: boolean },
  );
  const body = result.isBase64Encoded ? gunzipSync(Buffer.from(result.body as string, 'base64')).toString() : (result.body ?? '');
  return { status: result.statusCode, body, calls: dynamo(calls) };
};

describe('one iteration of a loop', () => {
  it('is one Query when the log was not read: the loop’s own steps of that iteration, its result', async () => {
    const { result, calls } = await recordCalls(() => readIteration(run, 'each', 34, undefined));
    expect(dynamo(calls).map((c) => c.command)).toEqual(['Query']);
    expect(result.found).toBe(true);
    if (!result.found) return;
    expect(result.events.map((e) => [e.type, e.data.stepId, e.data.iteration])).toEqual([
      ['step.started', 'b', 34],
      ['step.succeeded', 'b', 34],
      ['step.started', 'c', 34],
      ['step.succeeded', 'c', 34],
    ]);
    expect(result.result).toEqual({ value: { z: 350 } });
    // The other loop's iteration 35 is its own.
    const other = await readIteration(run, 'again', 34, undefined);
    expect(other.found && other.events.map((e) => e.data.stepId)).toEqual(['d', 'd']);
    // Past the loop's end: said so, nothing read.
    const past = await recordCalls(() => readIteration(run, 'each', 60, undefined));
    expect(past.result).toMatchObject({ found: false, why: 'The loop each has 60 iterations: there is no iteration 61.' });
    expect(dynamo(past.calls)).toHaveLength(0);
  });

  it('costs the run page no call more when its log was read whole, and shows the iteration', async () => {
    await view(run.executionId, {});
    const plain = await view(run.executionId, {});
    const opened = await view(run.executionId, { iteration: '35', loop: 'each' });
    expect(opened.status).toBe(200);
    expect(opened.calls.map((c) => c.command)).toEqual(plain.calls.map((c) => c.command));
    expect(opened.body).toContain('Iteration 35 of each');
    expect(opened.body).toContain('href="#step-c"');
    // Nonsense in the address is a 400 page and reads nothing of the run.
    const bad = await view(run.executionId, { iteration: '0' });
    expect(bad.status).toBe(400);
    expect(bad.calls.length).toBeLessThan(plain.calls.length);
  });

  it("reads nothing of another account's run: its page is a 404, its iteration's Query finds nothing", async () => {
    const other = await givenAccount();
    const theirs = (await login(other.admin.email, PASSWORD, '203.0.113.8')).token;
    const seen = await view(run.executionId, { iteration: '35' }, theirs);
    expect(seen.status).toBe(404);
    expect(seen.body).not.toContain('Iteration 35');
    expect(await iterationEvents(other.account.accountId, run.executionId, run.startedAt, 34)).toEqual([]);
  });
});
