import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { eventually, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { bearer, expectProblem, readResponse } from '../support/http.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Schedules on the local stack, over HTTP: the in-process scheduler fires the same handler EventBridge
 * Scheduler invokes on AWS, at the times `nextFireTimes` gives, and the workers run what it starts.
 * The file has a table of its own: every local stack loads the enabled schedules of its table, and no
 * other file's stack may fire these.
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
beforeAll(async () => {
  await useOwnTable();
  ({ stack } = await localStackOnSharedEmulators('schedules'));
});
afterAll(() => stack?.stop());

async function call(path: string, token: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(`${stack.url}${path}`, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers: { ...bearer(token), ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  return readResponse(res);
}

async function givenWorkflow(steps: unknown[]) {
  const a = await givenAccount({ plan: 'pro' });
  const definition = WorkflowDefinition.parse({ variables: { who: { type: 'string' }, count: { type: 'number', default: 1 } }, steps });
  const workflow = await createWorkflow(a.admin, {
    name: `wf-${randomBytes(3).toString('hex')}`,
    definition,
    recovery: false,
    editors: [],
  });
  return { ...a, workflow, session: await sessionOf(a.admin.email) };
}

const scheduleRuns = async (key: string, workflowId: string) =>
  (await call(`/api/v1/executions?workflowId=${workflowId}&trigger=schedule`, key)).json.items as any[];

describe('schedules on the local stack', () => {
  it('fires an at() schedule a few seconds ahead once: one run with its variables, then the schedule is disabled', async () => {
    const t = await givenWorkflow([{ id: 'greet', type: 'set', values: { greeting: "{% 'hello ' & $vars.who %}" } }]);
    const due = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    const at = new Date(due).toISOString().slice(0, 19);
    const created = await call(`/api/workflows/${t.workflow.workflowId}/schedules`, t.session, {
      json: { expression: `at(${at})`, variables: { who: 'ops' } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.nextFireTimes.map(Date.parse)).toEqual([due]);
    const fired = await eventually(
      async () => (await call(`/api/schedules/${created.json.id}`, t.session)).json,
      (s) => s.fires === 1 && s.enabled === false,
    );
    expect(fired).toMatchObject({ fires: 1, skips: 0, failures: 0, nextFireTimes: [] });
    const [run, ...more] = await scheduleRuns(t.adminKey.token, t.workflow.workflowId);
    expect(more).toEqual([]);
    expect(run).toMatchObject({ executionId: fired.lastExecutionId, trigger: 'schedule', scheduleId: created.json.id, scheduledAt: due });
    expect(run.startedAt).toBeGreaterThanOrEqual(due);
    const done = await eventually(
      async () => (await call(`/api/v1/executions/${run.executionId}`, t.adminKey.token)).json,
      (e) => e.status === 'SUCCEEDED',
    );
    expect(done.variables).toEqual({ who: 'ops', count: 1, greeting: 'hello ops' });
  });

  it('runs now (202, a manual fire); with overlap skip a second one while the run is unfinished is 409 and a counted skip', async () => {
    const t = await givenWorkflow([{ id: 'wait', type: 'delay', seconds: 600 }]);
    const { json: s } = await call(`/api/workflows/${t.workflow.workflowId}/schedules`, t.session, {
      json: { expression: 'at(2099-01-01T00:00:00)', variables: { who: 'night shift' } },
    });
    const first = await call(`/api/schedules/${s.id}/run`, t.session, { method: 'POST' });
    expect(first.status, first.text).toBe(202);
    expect(first.headers.get('location')).toBe(`/api/v1/executions/${first.json.executionId}`);
    expect(first.json).toMatchObject({
      trigger: 'schedule',
      scheduleId: s.id,
      manualFire: true,
      variables: { who: 'night shift', count: 1 },
    });
    await eventually(
      async () => (await call(`/api/v1/executions/${first.json.executionId}`, t.adminKey.token)).json,
      (e) => e.status === 'RUNNING',
    );
    expectProblem(await call(`/api/schedules/${s.id}/run`, t.session, { method: 'POST' }), 409, 'SCHEDULE_RUN_IN_PROGRESS');
    expect((await call(`/api/schedules/${s.id}`, t.session)).json).toMatchObject({
      fires: 1,
      skips: 1,
      lastExecutionId: first.json.executionId,
    });
    expect(await scheduleRuns(t.adminKey.token, t.workflow.workflowId)).toHaveLength(1);
    // Once that run has finished, the next fire runs.
    const cancelled = await call(`/api/v1/executions/${first.json.executionId}/cancel`, t.adminKey.token, { json: {} });
    expect(cancelled.status, cancelled.text).toBeLessThan(300);
    await eventually(
      async () => (await call(`/api/v1/executions/${first.json.executionId}`, t.adminKey.token)).json,
      (e) => e.status === 'CANCELLED',
    );
    const second = await call(`/api/schedules/${s.id}/run`, t.session, { method: 'POST' });
    expect(second.status, second.text).toBe(202);
    expect(await scheduleRuns(t.adminKey.token, t.workflow.workflowId)).toHaveLength(2);
    await call(`/api/v1/executions/${second.json.executionId}/cancel`, t.adminKey.token, { json: {} });
  });
});
