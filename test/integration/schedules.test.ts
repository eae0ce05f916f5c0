import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as createHandler } from '../../functions/http/schedules/create.ts';
import { handler as deleteHandler } from '../../functions/http/schedules/delete.ts';
import { handler as getHandler } from '../../functions/http/schedules/get.ts';
import { handler as listHandler } from '../../functions/http/schedules/list.ts';
import { handler as runHandler } from '../../functions/http/schedules/run.ts';
import { handler as eventsHandler } from '../../functions/http/schedules/events.ts';
import { handler as updateHandler } from '../../functions/http/schedules/update.ts';
import { handler as fireHandler } from '../../functions/schedule/fire.ts';
import { handler as executionsHandler } from '../../functions/http/v1/executions/list.ts';
import type { Plan } from '../../shared/config.ts';
import { setPlan } from '../../shared/db/entities/account.ts';
import { getSchedule, replaceSchedule, type Schedule } from '../../shared/db/entities/schedule.ts';
import type { User } from '../../shared/db/entities/user.ts';
import { updateMember } from '../../shared/domain/members.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { createWorkflow, removeWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { fireTimes, localClock } from '../../shared/schedules/clock.ts';
import { queue } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';
import { sendEvent } from '../../shared/notifications/deliver.ts';
import { EventNotice } from '../../shared/engine/notify.ts';
import { EXAMPLE_SECRET } from '../support/definitions.ts';
import { ScheduleView } from '../../shared/schemas/schedules.ts';
import { useOwnQueues, useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Schedules through their handlers with console sessions, and fires through the `schedule-fire`
 * handler as EventBridge Scheduler (or the local scheduler) invokes it. No workers run here: a run a
 * fire starts stays PENDING, unfinished, which is what the overlap cases need. The file has a table of
 * its own: the drift repair reads every schedule of its table, and no other file's may be touched.
 */

beforeAll(async () => {
  await useOwnTable();
  await useOwnQueues({ HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
});

const api = {
  create: (session: string, workflowId: string, body: unknown) =>
    invoke(
      createHandler,
      apiEvent({
        method: 'POST',
        path: `/api/workflows/${workflowId}/schedules`,
        headers: bearer(session),
        params: { id: workflowId },
        body: body as object,
      }),
    ),
  list: (session: string, workflowId: string) =>
    invoke(listHandler, apiEvent({ path: `/api/workflows/${workflowId}/schedules`, headers: bearer(session), params: { id: workflowId } })),
  get: (session: string, id: string) =>
    invoke(getHandler, apiEvent({ path: `/api/schedules/${id}`, headers: bearer(session), params: { scheduleId: id } })),
  update: (session: string, id: string, body: unknown) =>
    invoke(
      updateHandler,
      apiEvent({ method: 'PUT', path: `/api/schedules/${id}`, headers: bearer(session), params: { scheduleId: id }, body: body as object }),
    ),
  remove: (session: string, id: string) =>
    invoke(
      deleteHandler,
      apiEvent({ method: 'DELETE', path: `/api/schedules/${id}`, headers: bearer(session), params: { scheduleId: id } }),
    ),
  run: (session: string, id: string) =>
    invoke(
      runHandler,
      apiEvent({ method: 'POST', path: `/api/schedules/${id}/run`, headers: bearer(session), params: { scheduleId: id } }),
    ),
  events: (session: string, id: string, query: Record<string, string> = {}) =>
    invoke(eventsHandler, apiEvent({ path: `/api/schedules/${id}/events`, headers: bearer(session), params: { scheduleId: id }, query })),
  runs: (key: string, query: Record<string, string>) =>
    invoke(executionsHandler, apiEvent({ path: '/api/v1/executions', headers: bearer(key), query })),
};
const fire = (accountId: string, scheduleId: string, at: number) =>
  fireHandler({ accountId, scheduleId, scheduledTime: new Date(at).toISOString() }) as Promise<{ outcome: string; executionId?: string }>;

const DEFINITION = WorkflowDefinition.parse({
  variables: { count: { type: 'number', default: 1 }, who: { type: 'string' } },
  steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }],
});
const workflowOf = (owner: Pick<User, 'accountId' | 'userId' | 'role'>, editors: string[] = []) =>
  createWorkflow(owner, { name: `wf-${randomBytes(3).toString('hex')}`, definition: DEFINITION, recovery: false, editors });

/** An account, sessions of its admin and member, a workflow of the admin's (the member may not edit it). */
async function givenTeam(plan: Plan = 'team') {
  const a = await givenAccount({ plan });
  const [adminSession, memberSession, workflow] = await Promise.all([
    sessionOf(a.admin.email),
    sessionOf(a.member.email),
    workflowOf(a.admin),
  ]);
  return { ...a, adminSession, memberSession, workflow };
}

/** Daily at 9:00: an answer no reading of the rules can differ on. */
const DAILY = 'cron(0 9 * * ? *)';
const YEAR = new Date().getUTCFullYear() + 1;
const paths = (res: { json: any }): string[] => (res.json.errors ?? []).map((e: { path: string }) => e.path);
/** The notifications queued so far (this file's own queue), taken off it. */
async function takeNotifyMessages(count: number): Promise<EventNotice[]> {
  const taken: EventNotice[] = [];
  for (let i = 0; i < 10 && taken.length < count; i++) {
    const { Messages = [] } = await queue().send(
      new ReceiveMessageCommand({
        QueueUrl: config().NOTIFY_QUEUE_URL,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 300,
      }),
    );
    taken.push(...Messages.map((m) => EventNotice.parse(JSON.parse(m.Body ?? ''))));
  }
  return taken;
}
const runsOf = async (key: string, workflowId: string) => (await api.runs(key, { workflowId, trigger: 'schedule' })).json.items as any[];

describe('create, read, list', () => {
  it('answers 201 with the schedule, its Location and the next 3 fire times in its timezone', async () => {
    const t = await givenTeam();
    const res = await api.create(t.adminSession, t.workflow.workflowId, {
      name: 'morning',
      expression: DAILY,
      timezone: 'Europe/Berlin',
      variables: { who: 'ops' },
    });
    expect(res.status, res.body).toBe(201);
    const s = ScheduleView.parse(res.json);
    expect(res.headers.location).toBe(`/api/schedules/${s.id}`);
    expect(s).toMatchObject({
      workflowId: t.workflow.workflowId,
      name: 'morning',
      enabled: true,
      overlap: 'skip',
      fires: 0,
      skips: 0,
      failures: 0,
    });
    expect(s.variables).toEqual({ who: 'ops' });
    expect(s.nextFireTimes).toHaveLength(3);
    for (const time of s.nextFireTimes) expect(time).toMatch(/^\d{4}-\d{2}-\d{2}T09:00:00\+0[12]:00$/);
    const instants = s.nextFireTimes.map((x) => Date.parse(x));
    expect(instants[0]).toBeGreaterThan(Date.now());
    expect([...instants].sort((a, b) => a - b)).toEqual(instants);
    expect(localClock().timers.has(s.id)).toBe(true);

    const read = await api.get(t.memberSession, s.id);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id: s.id, expression: DAILY, timezone: 'Europe/Berlin' });
    const list = await api.list(t.memberSession, t.workflow.workflowId);
    expect(list.status).toBe(200);
    expect(list.json.items.map((x: { id: string }) => x.id)).toEqual([s.id]);
  });

  it('defaults to UTC, overlap skip, enabled, the expression as name; a disabled one has no fire times and no timer', async () => {
    const t = await givenTeam();
    const res = await api.create(t.adminSession, t.workflow.workflowId, { expression: 'rate(5 minutes)', enabled: false });
    expect(res.status, res.body).toBe(201);
    expect(res.json).toMatchObject({ name: 'rate(5 minutes)', timezone: 'UTC', overlap: 'skip', enabled: false, nextFireTimes: [] });
    expect(localClock().timers.has(res.json.id)).toBe(false);
  });

  it('shows the next fire times from startAt when it is later than now', async () => {
    const t = await givenTeam();
    const res = await api.create(t.adminSession, t.workflow.workflowId, {
      expression: DAILY,
      startAt: `${YEAR}-03-10T00:00:00Z`,
      endAt: `${YEAR}-03-11T23:00:00Z`,
    });
    expect(res.status, res.body).toBe(201);
    // UTC's offset may be written +00:00 or Z: compared as instants.
    expect(res.json.nextFireTimes.map(Date.parse)).toEqual([Date.parse(`${YEAR}-03-10T09:00:00Z`), Date.parse(`${YEAR}-03-11T09:00:00Z`)]);
    expect(Date.parse(res.json.startAt)).toBe(Date.parse(`${YEAR}-03-10T00:00:00Z`));
    expect(res.json.startAt).toMatch(/^\d{4}-03-10T00:00:00(\+00:00|Z)$/);
  });
});

describe('validation: 400 VALIDATION_FAILED with the path, nothing written', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['an expression of no kind', { expression: 'every day' }, 'expression'],
    ['a cron with five fields', { expression: 'cron(0 9 * * ?)' }, 'expression'],
    ['a rate of zero', { expression: 'rate(0 minutes)' }, 'expression'],
    ['an at() that is no date', { expression: `at(${YEAR}-02-30T09:00:00)` }, 'expression'],
    ['an at() in the past', { expression: 'at(2020-01-01T09:00:00)' }, 'expression'],
    ['an unknown timezone', { expression: DAILY, timezone: 'Mars/Olympus' }, 'timezone'],
    ['a variable of the wrong type', { expression: DAILY, variables: { count: 'three' } }, 'variables.count'],
    ['endAt before startAt', { expression: DAILY, startAt: `${YEAR}-05-01T00:00:00Z`, endAt: `${YEAR}-04-01T00:00:00Z` }, 'endAt'],
    ['startAt without an offset', { expression: DAILY, startAt: `${YEAR}-05-01T00:00:00` }, 'startAt'],
    ['an unknown overlap', { expression: DAILY, overlap: 'queue' }, 'overlap'],
  ];
  it.each(cases)('refuses %s', async (_, body, path) => {
    const t = await givenTeam();
    const res = await api.create(t.adminSession, t.workflow.workflowId, body);
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(paths(res)).toContain(path);
    expect((await api.list(t.adminSession, t.workflow.workflowId)).json.items).toEqual([]);
  });

  it('checks an update the same way, the merged result included, and leaves the schedule as it was', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, startAt: `${YEAR}-05-01T00:00:00Z` });
    const bad = await api.update(t.adminSession, s.id, { endAt: `${YEAR}-04-01T00:00:00Z` });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    expect(paths(bad)).toEqual(['endAt']);
    expectProblem(await api.update(t.adminSession, s.id, { timezone: 'Nowhere/Town' }), 400, 'VALIDATION_FAILED');
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ endAt: null, timezone: 'UTC', updatedAt: s.updatedAt });
  });
});

describe('update and delete', () => {
  it('changes what it is given (null clears startAt), replaces the timer, and a disabled one loses it', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, startAt: `${YEAR}-05-01T00:00:00Z` });
    const res = await api.update(t.adminSession, s.id, {
      expression: 'cron(30 6 * * ? *)',
      timezone: 'America/New_York',
      startAt: null,
      overlap: 'allow',
    });
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({
      expression: 'cron(30 6 * * ? *)',
      timezone: 'America/New_York',
      startAt: null,
      overlap: 'allow',
      enabled: true,
    });
    for (const time of res.json.nextFireTimes) expect(time).toMatch(/T06:30:00-0[45]:00$/);
    expect(localClock().timers.get(s.id)?.expression).toBe('cron(30 6 * * ? *)');
    const off = await api.update(t.adminSession, s.id, { enabled: false });
    expect(off.json.enabled).toBe(false);
    expect(localClock().timers.has(s.id)).toBe(false);
  });

  it('a rate without startAt fires first at its creation; a rename keeps its fire times, a new expression re-anchors them', async () => {
    const t = await givenTeam();
    const created = await api.create(t.adminSession, t.workflow.workflowId, { expression: 'rate(1 hour)' });
    expect(created.status, created.body).toBe(201);
    const s = created.json;
    const HOUR = 3600_000;
    // The local timer (to the millisecond): the first fire is the creation, due at once; the view shows those after it (to the second).
    expect(Date.parse(s.nextFireTimes[0])).toBe(Math.floor((s.createdAt + HOUR) / 1000) * 1000);
    const timer = () => localClock().timers.get(s.id) as Parameters<typeof fireTimes>[0];
    expect(fireTimes(timer(), s.createdAt - 1, 2)).toEqual([s.createdAt, s.createdAt + HOUR]);

    const renamed = await api.update(t.adminSession, s.id, { name: 'hourly', variables: { who: 'x' } });
    expect(renamed.status, renamed.body).toBe(200);
    expect(renamed.json.nextFireTimes).toEqual(s.nextFireTimes);
    expect(fireTimes(timer(), renamed.json.updatedAt, 1)).toEqual([s.createdAt + HOUR]);

    const changed = await api.update(t.adminSession, s.id, { expression: 'rate(2 hours)' });
    expect(changed.status, changed.body).toBe(200);
    const changedAt = changed.json.updatedAt as number;
    expect(fireTimes(timer(), changedAt - 1, 2)).toEqual([changedAt, changedAt + 2 * HOUR]);
    expect(Date.parse(changed.json.nextFireTimes[0])).toBe(Math.floor((changedAt + 2 * HOUR) / 1000) * 1000);
  });

  it('deletes with 204, timer included; then 404', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    expect((await api.remove(t.adminSession, s.id)).status).toBe(204);
    expect(localClock().timers.has(s.id)).toBe(false);
    expectProblem(await api.get(t.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.remove(t.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
  });

  it('goes with its workflow: deleting the workflow deletes its schedules and their timers', async () => {
    const t = await givenTeam();
    const other = await workflowOf(t.admin);
    const a = (await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })).json;
    const b = (await api.create(t.adminSession, t.workflow.workflowId, { expression: 'rate(1 hour)', enabled: false })).json;
    const kept = (await api.create(t.adminSession, other.workflowId, { expression: DAILY })).json;
    await removeWorkflow(t.admin, t.workflow.workflowId);
    expectProblem(await api.get(t.adminSession, a.id), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.get(t.adminSession, b.id), 404, 'SCHEDULE_NOT_FOUND');
    expect(localClock().timers.has(a.id)).toBe(false);
    expect((await api.get(t.adminSession, kept.id)).status).toBe(200);
    expectProblem(await api.list(t.adminSession, t.workflow.workflowId), 404, 'WORKFLOW_NOT_FOUND');
    // The enabled count went down with it: the plan's limit counts what is left.
    expect((await fire(t.account.accountId, a.id, Date.now())).outcome).toBe('ignored');
  });
});

describe('item and timer never diverge', () => {
  /** The local clock's next write fails, as EventBridge Scheduler's can (a fault no request can cause). */
  const failNextPut = () => {
    const clock = localClock();
    const put = clock.put.bind(clock);
    clock.put = async () => {
      clock.put = put;
      throw new Error('scheduler unavailable');
    };
  };

  it('a create whose timer cannot be made leaves no schedule and no place taken in the plan', async () => {
    const t = await givenTeam('pro');
    failNextPut();
    const res = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    expect(res.status).toBe(500);
    expect((await api.list(t.adminSession, t.workflow.workflowId)).json.items).toEqual([]);
    const five = await Promise.all(
      Array.from({ length: 5 }, () => api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })),
    );
    expect(five.map((r) => r.status)).toEqual(Array(5).fill(201));
  });

  it('an update whose timer cannot be written puts the schedule back as it was', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    failNextPut();
    expect((await api.update(t.adminSession, s.id, { expression: 'cron(45 23 * * ? *)' })).status).toBe(500);
    const after = (await api.get(t.adminSession, s.id)).json;
    expect(after.expression).toBe(DAILY);
    // A failed write may have reached the scheduler after all: the sweep writes the timer again, to be sure.
    expect((await repairScheduleDrift()).updated).toBe(1);
    expect(localClock().timers.get(s.id)?.expression).toBe(DAILY);
  });
});

describe('who may', () => {
  it('lets only editors of the workflow create, change, delete and run its schedules; every member reads', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    expectProblem(await api.create(t.memberSession, t.workflow.workflowId, { expression: DAILY }), 403, 'NOT_WORKFLOW_EDITOR');
    expectProblem(await api.update(t.memberSession, s.id, { name: 'x' }), 403, 'NOT_WORKFLOW_EDITOR');
    expectProblem(await api.remove(t.memberSession, s.id), 403, 'NOT_WORKFLOW_EDITOR');
    expectProblem(await api.run(t.memberSession, s.id), 403, 'NOT_WORKFLOW_EDITOR');
    expect((await api.get(t.memberSession, s.id)).status).toBe(200);
    const editable = await workflowOf(t.admin, [t.member.userId]);
    expect((await api.create(t.memberSession, editable.workflowId, { expression: DAILY })).status).toBe(201);
  });

  it("keeps accounts apart: another account's schedule and workflow ids are 404", async () => {
    const [t, other] = await Promise.all([givenTeam(), givenTeam()]);
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    expectProblem(await api.get(other.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.update(other.adminSession, s.id, { enabled: false }), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.remove(other.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.run(other.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
    expectProblem(await api.list(other.adminSession, t.workflow.workflowId), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await api.create(other.adminSession, t.workflow.workflowId, { expression: DAILY }), 404, 'WORKFLOW_NOT_FOUND');
    // A fire names its account: the schedule's id under another account fires nothing.
    expect((await fire(other.account.accountId, s.id, Date.now())).outcome).toBe('ignored');
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ enabled: true, fires: 0 });
  });
});

describe('plan limits on enabled schedules', () => {
  it('Free: none enabled (403 PLAN_LIMIT_REACHED), a disabled one may be kept but not enabled', async () => {
    const t = await givenTeam('free');
    expectProblem(await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY }), 403, 'PLAN_LIMIT_REACHED');
    const off = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, enabled: false });
    expect(off.status).toBe(201);
    expectProblem(await api.update(t.adminSession, off.json.id, { enabled: true }), 403, 'PLAN_LIMIT_REACHED');
    expect((await api.get(t.adminSession, off.json.id)).json.enabled).toBe(false);
  });

  it('Pro: 5 enabled, also when created at once; disabling or deleting one makes room', async () => {
    const t = await givenTeam('pro');
    const results = await Promise.all(
      Array.from({ length: 7 }, () => api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    for (const r of results.filter((x) => x.status !== 201)) expectProblem(r, 403, 'PLAN_LIMIT_REACHED');
    const off = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, enabled: false });
    expectProblem(await api.update(t.adminSession, off.json.id, { enabled: true }), 403, 'PLAN_LIMIT_REACHED');
    const [first, second] = results.filter((r) => r.status === 201).map((r) => r.json.id as string);
    await api.update(t.adminSession, first as string, { enabled: false });
    expect((await api.update(t.adminSession, off.json.id, { enabled: true })).status).toBe(200);
    expectProblem(await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY }), 403, 'PLAN_LIMIT_REACHED');
    await api.remove(t.adminSession, second as string);
    expect((await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })).status).toBe(201);
  });

  it('Enterprise: no limit', async () => {
    const t = await givenTeam('enterprise');
    const results = await Promise.all(
      Array.from({ length: 8 }, () => api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
  });
});

describe('fires', () => {
  it('starts a run as the v1 start does: trigger schedule, the schedule and its time, its variables with defaults; trigger=schedule lists it', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, variables: { who: 'ops' } });
    const due = Date.parse(`${YEAR}-01-02T09:00:00Z`);
    const out = await fire(t.account.accountId, s.id, due);
    expect(out.outcome).toBe('fired');
    const runs = await runsOf(t.adminKey.token, t.workflow.workflowId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      executionId: out.executionId,
      trigger: 'schedule',
      scheduleId: s.id,
      scheduledAt: due,
      status: 'PENDING',
      variables: { who: 'ops', count: 1 },
    });
    expect(runs[0].manualFire).toBeUndefined();
    // Other triggers are not in the schedule listing, and the schedule's runs are not in theirs.
    expect((await api.runs(t.adminKey.token, { workflowId: t.workflow.workflowId, trigger: 'api' })).json.items).toEqual([]);
    const after = (await api.get(t.adminSession, s.id)).json;
    expect(after).toMatchObject({ fires: 1, skips: 0, failures: 0, lastExecutionId: out.executionId });
    expect(after.lastFiredAt).toBeGreaterThan(0);
  });

  it('starts one run for duplicate deliveries of one fire, sent at once', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, overlap: 'allow' });
    const due = Date.parse(`${YEAR}-01-03T09:00:00Z`);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => fire(t.account.accountId, s.id, due)));
    expect(outcomes.filter((o) => o.outcome === 'fired')).toHaveLength(1);
    expect(outcomes.filter((o) => o.outcome === 'duplicate')).toHaveLength(7);
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toHaveLength(1);
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ fires: 1, skips: 0 });
    // A later delivery of the same fire too.
    expect((await fire(t.account.accountId, s.id, due)).outcome).toBe('duplicate');
    // One event in the schedule's log; a duplicate that took a seq before it lost left its number unused
    // (a seq only increases and may skip), and the later one, turned away by its key, took none.
    const { json: log } = await api.events(t.adminSession, s.id);
    expect(log.items.map((e: any) => e.type)).toEqual(['schedule.fired']);
    const seq = log.items[0].seq;
    expect(seq).toBeGreaterThanOrEqual(1);
    expect(seq).toBeLessThanOrEqual(8);
    expect((await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-01-04T09:00:00Z`))).outcome).toBe('fired');
    const { json: later } = await api.events(t.adminSession, s.id);
    expect(later.items.map((e: any) => e.seq)[1]).toBeGreaterThan(seq);
  });

  it('overlap skip: a fire while its run is unfinished starts nothing and counts a skip; run now answers 409', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    const first = await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-01-04T09:00:00Z`));
    expect(first.outcome).toBe('fired');
    expect((await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-01-05T09:00:00Z`))).outcome).toBe('skipped');
    const now = await api.run(t.adminSession, s.id);
    expectProblem(now, 409, 'SCHEDULE_RUN_IN_PROGRESS');
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toHaveLength(1);
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ fires: 1, skips: 2, lastExecutionId: first.executionId });
  });

  it('overlap skip holds for fires at once: of two due times fired together, one runs and one is skipped', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    const outcomes = await Promise.all(
      [`${YEAR}-01-06T09:00:00Z`, `${YEAR}-01-07T09:00:00Z`].map((d) => fire(t.account.accountId, s.id, Date.parse(d))),
    );
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['fired', 'skipped']);
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toHaveLength(1);
  });

  it('overlap allow: every fire starts its run; run now answers 202 with a manual run', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, overlap: 'allow' });
    expect((await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-01-08T09:00:00Z`))).outcome).toBe('fired');
    const now = await api.run(t.adminSession, s.id);
    expect(now.status, now.body).toBe(202);
    expect(now.headers.location).toBe(`/api/v1/executions/${now.json.executionId}`);
    expect(now.json).toMatchObject({ trigger: 'schedule', scheduleId: s.id, manualFire: true, status: 'PENDING' });
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toHaveLength(2);
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ fires: 2, lastExecutionId: now.json.executionId });
  });

  it('fire-now at once: every answer is 202 or 409 (never 5xx), the runs started are the 202s, each log line carries its own request id', async () => {
    const t = await givenTeam();
    const { json: allow } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, overlap: 'allow' });
    const { json: skip } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    const lines: string[] = [];
    const spies = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: unknown) => {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        return true;
      }),
    );
    let answers: Awaited<ReturnType<typeof api.run>>[][];
    try {
      answers = await Promise.all(
        [allow.id, skip.id].map((id) => Promise.all(Array.from({ length: 20 }, () => api.run(t.adminSession, id)))),
      );
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const [allowed = [], skipped = []] = answers;
    for (const res of [...allowed, ...skipped]) expect([202, 409], res.body).toContain(res.status);
    const started = (await runsOf(t.adminKey.token, t.workflow.workflowId)).filter((r) => r.manualFire);
    const accepted = [...allowed, ...skipped]
      .filter((r) => r.status === 202)
      .map((r) => r.json.executionId)
      .sort();
    expect(started.map((r) => r.executionId).sort()).toEqual(accepted);
    // overlap skip: one run, the others refused while it is unfinished.
    expect(skipped.filter((r) => r.status === 202)).toHaveLength(1);
    for (const res of skipped.filter((r) => r.status === 409)) expect(res.json.code).toBe('SCHEDULE_RUN_IN_PROGRESS');
    expect((await api.get(t.adminSession, allow.id)).json.fires).toBe(allowed.filter((r) => r.status === 202).length);
    // Each outcome is in its schedule's log once, with a seq of its own (numbers taken by atomic adds,
    // not by conditions the fires race on): increasing in the log's order, distinct, never a 5xx.
    const logOf = async (id: string) => {
      const res = await api.events(t.adminSession, id, { limit: '100' });
      expect(res.status, res.body).toBe(200);
      return res.json.items as { type: string; seq: number; executionId: string }[];
    };
    const allowLog = await logOf(allow.id);
    // The allow schedule's fires wait for nothing of each other's: every one starts its run.
    expect(allowed.map((r) => r.status)).toEqual(allowed.map(() => 202));
    const allowRuns = allowed.filter((r) => r.status === 202).map((r) => r.json.executionId as string);
    expect(allowLog.map((e) => e.type)).toEqual(allowRuns.map(() => 'schedule.fired'));
    expect(allowLog.map((e) => e.executionId).sort()).toEqual(allowRuns.sort());
    const skipLog = await logOf(skip.id);
    expect(skipLog.filter((e) => e.type === 'schedule.fired')).toHaveLength(1);
    expect(skipLog.filter((e) => e.type === 'schedule.skipped')).toHaveLength(
      skipped.filter((r) => r.status === 409 && r.json.code === 'SCHEDULE_RUN_IN_PROGRESS').length,
    );
    for (const log of [allowLog, skipLog]) {
      const seqs = log.map((e) => e.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }

    // Each answer's request id is on its own access log line (with its status), and on no other request's.
    const logged = lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as { message: string; requestId?: string; status?: number; path?: string }];
      } catch {
        return [];
      }
    });
    const access = logged.filter((l) => l.message === 'request' && l.path?.endsWith('/run'));
    expect(access).toHaveLength(40);
    for (const res of [...allowed, ...skipped]) {
      const id = res.headers['x-request-id'];
      expect(res.json.requestId ?? id).toBe(id);
      expect(access.filter((l) => l.requestId === id).map((l) => l.status)).toEqual([res.status]);
    }
  });

  it('at(): fires once, then the schedule is disabled, its timer gone and its place in the plan free', async () => {
    const t = await givenTeam('pro');
    const at = `${YEAR}-06-01T12:00:00`;
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: `at(${at})`, timezone: 'Europe/Berlin' });
    expect(s.nextFireTimes).toEqual([`${at}+02:00`]);
    expect((await fire(t.account.accountId, s.id, Date.parse(`${at}+02:00`))).outcome).toBe('fired');
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({ enabled: false, fires: 1, nextFireTimes: [] });
    expect(localClock().timers.has(s.id)).toBe(false);
    const more = await Promise.all(
      Array.from({ length: 5 }, () => api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY })),
    );
    expect(more.map((r) => r.status)).toEqual(Array(5).fill(201));
  });

  it('a disabled schedule fires nothing', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, enabled: false });
    expect((await fire(t.account.accountId, s.id, Date.now())).outcome).toBe('ignored');
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toEqual([]);
  });

  it('stops when the account loses access: a plan without schedules, or its creator disabled, fails the fire and disables it', async () => {
    const t = await givenTeam();
    const editable = await workflowOf(t.admin, [t.member.userId]);
    const byMember = (await api.create(t.memberSession, editable.workflowId, { expression: DAILY })).json;
    await updateMember(
      { kind: 'session', accountId: t.account.accountId, userId: t.admin.userId, role: 'admin', sessionId: 'test' },
      t.member.userId,
      { disabled: true },
    );
    expect((await fire(t.account.accountId, byMember.id, Date.now())).outcome).toBe('failed');
    expect((await api.get(t.adminSession, byMember.id)).json).toMatchObject({
      enabled: false,
      failures: 1,
      fires: 0,
      lastFailure: { code: 'CREATOR_DISABLED' },
    });
    expect(localClock().timers.has(byMember.id)).toBe(false);

    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    await setPlan(t.account.accountId, 'free');
    expect((await fire(t.account.accountId, s.id, Date.now())).outcome).toBe('failed');
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({
      enabled: false,
      failures: 1,
      lastFailure: { code: 'PLAN_LIMIT_REACHED' },
    });
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toEqual([]);
  });

  it('fails (counted, still enabled) when the workflow changed so that its variables no longer fit; run now answers 400', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY, variables: { who: 'ops' } });
    const changed = WorkflowDefinition.parse({ ...DEFINITION, variables: { who: { type: 'number' } } });
    await updateWorkflow(t.admin, t.workflow.workflowId, { definition: changed });
    const out = await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-01-09T09:00:00Z`));
    expect(out).toMatchObject({ outcome: 'failed', code: 'VALIDATION_FAILED' });
    const now = await api.run(t.adminSession, s.id);
    expectProblem(now, 400, 'VALIDATION_FAILED');
    expect((await api.get(t.adminSession, s.id)).json).toMatchObject({
      enabled: true,
      fires: 0,
      failures: 2,
      lastFailure: { code: 'VALIDATION_FAILED' },
    });
    expect(await runsOf(t.adminKey.token, t.workflow.workflowId)).toEqual([]);
    // Each failure is in the schedule's log, its seq taken by the add that counted it (checked before any was taken).
    const { json: log } = await api.events(t.adminSession, s.id);
    expect(log.items.map((e: any) => [e.type, e.seq, e.executionId, e.data.error.code, e.data.manual])).toEqual([
      ['schedule.failed', 1, '', 'VALIDATION_FAILED', false],
      ['schedule.failed', 2, '', 'VALIDATION_FAILED', true],
    ]);
  });

  it('drops a malformed fire event', async () => {
    expect(await fireHandler({ scheduleId: 'x' })).toEqual({ outcome: 'malformed' });
  });
});

describe('events', () => {
  it("sends schedule.fired, schedule.skipped and schedule.failed to the workflow's notification targets, signed like every event", async () => {
    const received: { type: string; body: any; id: string }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        // Signed as every event is (Standard Webhooks): verify throws on a bad signature.
        const body = new Webhook(EXAMPLE_SECRET).verify(raw, req.headers as Record<string, string>) as any;
        received.push({ type: body.type, body, id: String(req.headers['webhook-id']) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const port = (receiver.address() as AddressInfo).port;
      const t = await givenTeam();
      const definition = WorkflowDefinition.parse({
        ...DEFINITION,
        notifications: [
          {
            url: `http://127.0.0.1:${port}/hook`,
            events: ['schedule.fired', 'schedule.skipped', 'schedule.failed'],
            secret: EXAMPLE_SECRET,
          },
        ],
      });
      const workflow = await createWorkflow(t.admin, { name: 'notified', definition, recovery: false, editors: [] });
      const { json: s } = await api.create(t.adminSession, workflow.workflowId, { expression: DAILY, variables: { who: 'ops' } });
      const fired = await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-02-01T09:00:00Z`));
      expect((await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-02-02T09:00:00Z`))).outcome).toBe('skipped');
      await setPlan(t.account.accountId, 'free');
      expect((await fire(t.account.accountId, s.id, Date.parse(`${YEAR}-02-03T09:00:00Z`))).outcome).toBe('failed');
      const messages = await takeNotifyMessages(3);
      expect(messages.map((m) => m.event.type).sort()).toEqual(['schedule.failed', 'schedule.fired', 'schedule.skipped']);
      for (const m of messages) expect(await sendEvent(m)).toMatchObject({ ok: true });
      const byType = Object.fromEntries(received.map((r) => [r.type, r.body]));
      expect(byType['schedule.fired'].data).toMatchObject({
        executionId: fired.executionId,
        workflowId: workflow.workflowId,
        data: { scheduleId: s.id, scheduledAt: Date.parse(`${YEAR}-02-01T09:00:00Z`), manual: false },
      });
      expect(byType['schedule.skipped'].data).toMatchObject({ executionId: fired.executionId, data: { scheduleId: s.id } });
      expect(byType['schedule.failed'].data).toMatchObject({ data: { scheduleId: s.id, error: { code: 'PLAN_LIMIT_REACHED' } } });
      expect(new Set(received.map((r) => r.id)).size).toBe(3);

      // The schedule's own log: its events in order, numbered 1, 2, 3 by the schedule; the payloads carry the same seq.
      const log = await api.events(t.adminSession, s.id);
      expect(log.status, log.body).toBe(200);
      expect(log.json.items.map((e: any) => [e.type, e.seq])).toEqual([
        ['schedule.fired', 1],
        ['schedule.skipped', 2],
        ['schedule.failed', 3],
      ]);
      expect(log.json.items.map((e: any) => e.eventId)).toEqual(
        ['schedule.fired', 'schedule.skipped', 'schedule.failed'].map((ty) => byType[ty].data.eventId),
      );
      for (const e of log.json.items) expect(byType[e.type].data.seq).toBe(e.seq);
      expect(log.json.items[0]).toMatchObject({ executionId: fired.executionId, data: { scheduleId: s.id } });
      // Paged with a cursor, as the other lists are.
      const first = await api.events(t.adminSession, s.id, { limit: '2' });
      expect(first.json.items.map((e: any) => e.seq)).toEqual([1, 2]);
      const rest = await api.events(t.adminSession, s.id, { limit: '2', cursor: first.json.nextCursor });
      expect(rest.json.items.map((e: any) => e.seq)).toEqual([3]);
      // Every member reads it; another account's session finds no such schedule.
      expect((await api.events(t.memberSession, s.id)).status).toBe(200);
      const other = await givenTeam();
      expectProblem(await api.events(other.adminSession, s.id), 404, 'SCHEDULE_NOT_FOUND');
    } finally {
      receiver.close();
    }
  });
});

describe('drift repair (the sweep)', () => {
  it('re-writes a timer whose schedule changed while its timer write failed', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    const stored = (await getSchedule(t.account.accountId, s.id, true)) as Schedule;
    expect(stored.syncedAt).toBe(stored.updatedAt);
    // As an update leaves it when the timer write fails and putting the item back fails too.
    await replaceSchedule(stored, { ...stored, expression: 'cron(15 7 * * ? *)', updatedAt: stored.updatedAt + 1 }, undefined);
    expect(localClock().timers.get(s.id)?.expression).toBe(DAILY);
    expect((await repairScheduleDrift()).updated).toBe(1);
    expect(localClock().timers.get(s.id)?.expression).toBe('cron(15 7 * * ? *)');
    expect((await getSchedule(t.account.accountId, s.id, true))?.syncedAt).toBe(stored.updatedAt + 1);
  });

  it('recreates a missing timer, deletes a timer without an enabled schedule, and counts both', async () => {
    const t = await givenTeam();
    const { json: s } = await api.create(t.adminSession, t.workflow.workflowId, { expression: DAILY });
    await localClock().remove(s.id);
    await localClock().put({ accountId: t.account.accountId, scheduleId: 'sch_orphan', expression: DAILY, timezone: 'UTC', updatedAt: 1 });
    const repaired = await repairScheduleDrift();
    expect(repaired.created).toBeGreaterThanOrEqual(1);
    expect(repaired.deleted).toBeGreaterThanOrEqual(1);
    expect(localClock().timers.has(s.id)).toBe(true);
    expect(localClock().timers.has('sch_orphan')).toBe(false);
    expect(await repairScheduleDrift()).toEqual({ created: 0, updated: 0, deleted: 0, orphaned: 0 });
    expect((await getSchedule(t.account.accountId, s.id))?.enabled).toBe(true);
  });
});
