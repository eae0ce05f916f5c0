import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/schedules/create.ts';
import { handler as deleteHandler } from '../../functions/http/schedules/delete.ts';
import { handler as getHandler } from '../../functions/http/schedules/get.ts';
import { db, tableName } from '../../shared/clients.ts';
import { audited } from '../../shared/db/audited.ts';
import { scheduleCountKey } from '../../shared/db/entities/schedule.ts';
import { deleteWorkflow } from '../../shared/db/entities/workflow.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { localClock } from '../../shared/schedules/clock.ts';
import { useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// A workflow's delete that stops after the workflow, before its schedules (issue 41, finding 3: under
// kill -9 they were left behind, shown enabled, and pausing, deleting or running them answered 404
// WORKFLOW_NOT_FOUND: nobody could remove them). The sweep finishes the delete (the schedules and
// their timers go, the enabled count with them), and until it does an admin or the schedule's creator
// can delete such a schedule. A table of its own: the sweep reads every schedule of its table.

beforeAll(async () => {
  await useOwnTable();
});

const DEFINITION = WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: { x: 1 } }] });

async function given() {
  const a = await givenAccount({ plan: 'team' });
  const [admin, member] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
  const workflow = await createWorkflow(a.admin, {
    name: `wf-${randomBytes(3).toString('hex')}`,
    definition: DEFINITION,
    recovery: false,
    editors: [],
  });
  const schedule = async (body: object) => {
    const res = await invoke(
      createHandler,
      apiEvent({
        method: 'POST',
        path: `/api/workflows/${workflow.workflowId}/schedules`,
        headers: bearer(admin),
        params: { id: workflow.workflowId },
        body: { expression: 'cron(0 9 * * ? *)', timezone: 'UTC', ...body },
      }),
    );
    expect(res.status, res.body).toBe(201);
    return res.json.id as string;
  };
  /** What `removeWorkflow` writes first (the workflow, with its audit entry), and then the process is killed. */
  const crashWhileDeleting = () =>
    deleteWorkflow(a.account.accountId, workflow.workflowId, [
      audited(a.admin, 'workflow.deleted', { type: 'workflow', id: workflow.workflowId, name: workflow.name }),
    ]);
  return { ...a, admin, member, workflow, schedule, crashWhileDeleting };
}

const remove = (session: string, id: string) =>
  invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/schedules/${id}`, headers: bearer(session), params: { scheduleId: id } }));
const get = (session: string, id: string) =>
  invoke(getHandler, apiEvent({ path: `/api/schedules/${id}`, headers: bearer(session), params: { scheduleId: id } }));
const enabledCount = async (accountId: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: scheduleCountKey(accountId), ConsistentRead: true }))).Item?.enabled;

describe("a workflow's delete that stopped before its schedules", () => {
  it('leaves schedules that an admin can delete (a member who did not create them may not): never 404 for the workflow', async () => {
    const t = await given();
    const [enabled, paused] = [await t.schedule({ name: 'on' }), await t.schedule({ name: 'off', enabled: false })];
    expect(await enabledCount(t.account.accountId)).toBe(1);
    await t.crashWhileDeleting();
    // Still there, as the reporter saw them.
    expect((await get(t.admin, enabled)).json).toMatchObject({ enabled: true });

    expectProblem(await remove(t.member, enabled), 403, 'NOT_WORKFLOW_EDITOR');
    expect((await remove(t.admin, enabled)).status).toBe(204);
    expect((await remove(t.admin, paused)).status).toBe(204);
    expectProblem(await get(t.admin, enabled), 404, 'SCHEDULE_NOT_FOUND');
    expect(localClock().timers.has(enabled)).toBe(false);
    expect(await enabledCount(t.account.accountId)).toBe(0);
  });

  it("is finished by the sweep: the schedules, their timers and the enabled count go; other workflows' stay", async () => {
    const t = await given();
    const kept = await given();
    const [enabled, paused] = [await t.schedule({ name: 'on' }), await t.schedule({ name: 'off', enabled: false })];
    const other = await kept.schedule({ name: 'kept' });
    await t.crashWhileDeleting();
    expect(localClock().timers.has(enabled)).toBe(true);

    const repaired = await repairScheduleDrift();
    expect(repaired).toMatchObject({ orphaned: 2, deleted: 1 });
    expectProblem(await get(t.admin, enabled), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await get(t.admin, paused), 404, 'SCHEDULE_NOT_FOUND');
    expect(localClock().timers.has(enabled)).toBe(false);
    expect(await enabledCount(t.account.accountId)).toBe(0);
    expect((await get(kept.admin, other)).status).toBe(200);
    expect(localClock().timers.has(other)).toBe(true);
    // Done: the next pass finds nothing to finish.
    expect(await repairScheduleDrift()).toMatchObject({ orphaned: 0, deleted: 0 });
  });
});
