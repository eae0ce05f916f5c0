import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as auditHandler } from '../../functions/http/audit/list.ts';
import { handler as createChannelHandler } from '../../functions/http/channels/create.ts';
import { handler as deleteChannelHandler } from '../../functions/http/channels/delete.ts';
import { handler as testChannelHandler } from '../../functions/http/channels/test.ts';
import { handler as updateChannelHandler } from '../../functions/http/channels/update.ts';
import { handler as channelRedeliverHandler } from '../../functions/http/console/settings/channels/redeliver.ts';
import { handler as redeliverHandler } from '../../functions/http/deliveries/redeliver.ts';
import { handler as createScheduleHandler } from '../../functions/http/schedules/create.ts';
import { handler as deleteScheduleHandler } from '../../functions/http/schedules/delete.ts';
import { handler as runScheduleHandler } from '../../functions/http/schedules/run.ts';
import { handler as updateScheduleHandler } from '../../functions/http/schedules/update.ts';
import { handler as cancelHandler } from '../../functions/http/v1/executions/cancel.ts';
import { handler as deliveriesHandler } from '../../functions/http/v1/executions/deliveries.ts';
import { handler as rerunHandler } from '../../functions/http/v1/executions/rerun.ts';
import { handler as resumeHandler } from '../../functions/http/v1/executions/resume.ts';
import { handler as retryHandler } from '../../functions/http/v1/executions/retry.ts';
import { handler as notifyWorker } from '../../functions/worker/notify.ts';
import { startPoller } from '../../infra/local/poller.ts';
import { workerFunction } from '../../infra/local/lambda.ts';
import { WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { db } from '../../shared/clients.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { config } from '../../shared/config.ts';
import type { AuditEntry } from '../../shared/db/entities/audit.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createChannel } from '../../shared/domain/channels.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { recoverIfCrashed } from '../../shared/engine/recovery.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { processRunMessage } from '../../shared/engine/worker.ts';
import { eventually, useOwnQueues } from '../support/engine.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

// The audit log's entries of run actions (v1, with an API key), redeliveries, schedules and approval
// channels: each change once, with its actor, channel, address and object; a refused action none.
// Runs are worked in-process (no run worker here); the notifications worker sends mail to the SES emulator.

type Account = Awaited<ReturnType<typeof givenAccount>>;
type Call = { method?: string; path: string; params?: Record<string, string>; body?: object; query?: Record<string, string> };
const as = (token: string, ip: string) => (handler: Parameters<typeof invoke>[0], c: Call) =>
  invoke(handler, apiEvent({ method: 'POST', ...c, headers: bearer(token), sourceIp: ip }));

let stopNotify: () => Promise<unknown>;
beforeAll(async () => {
  await useOwnQueues();
  const poller = startPoller(config().NOTIFY_QUEUE_URL as string, notifyWorker, {
    fn: workerFunction('worker/notify', WORKER_TIMEOUT_SECONDS),
  });
  stopNotify = () => poller.stop();
});
afterAll(() => stopNotify?.());

/** Every entry of the account (the admin's session reads them all), newest first. */
async function readAll(session: string, query: Record<string, string> = {}): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  do {
    const res = await invoke(
      auditHandler,
      apiEvent({ path: '/api/audit', headers: bearer(session), query: { limit: '100', ...query, ...(cursor ? { cursor } : {}) } }),
    );
    expect(res.status, res.body).toBe(200);
    out.push(...res.json.items);
    cursor = res.json.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

const only = (entries: AuditEntry[], action: string, objectId: string) => {
  const found = entries.filter((e) => e.action === action && e.object.id === objectId);
  expect(found, `${action} ${objectId}: ${JSON.stringify(entries.map((e) => `${e.action} ${e.object.id}`))}`).toHaveLength(1);
  return found[0] as AuditEntry;
};

const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;

/** Run the run's pending message in-process and read it back. */
async function work(e: Pick<Execution, 'accountId' | 'executionId'>, remainingMs = 30_000) {
  const before = await read(e);
  await processRunMessage(
    { accountId: e.accountId, executionId: e.executionId, dispatch: before.dispatch as string },
    { remainingMs: () => remainingMs },
  );
  return read(e);
}

/** A run of a new workflow of the admin's (no recovery), started through the API trigger. */
async function runOf(a: Account, steps: unknown[]) {
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'audited', definition: WorkflowDefinition.parse({ steps }), recovery: false, editors: [] },
  );
  return (await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId })).execution;
}

/** An INTERRUPTED run: its worker dies mid-run (its next transaction fails, its lease already over), and the crash is recovered. */
async function interrupted(a: Account) {
  const e = await runOf(a, [
    { id: 'one', type: 'set', values: { a: 1 } },
    { id: 'two', type: 'set', values: { b: 2 } },
  ]);
  const client = db();
  const send = client.send.bind(client);
  const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
    if (command instanceof TransactWriteCommand) {
      spy.mockRestore();
      throw new Error('simulated crash');
    }
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as never);
  await expect(work(e, -20_000)).rejects.toThrow('simulated crash');
  spy.mockRestore();
  expect(await recoverIfCrashed(await read(e))).toBe(true);
  expect((await read(e)).status).toBe('INTERRUPTED');
  return e;
}

const APPROVAL = [
  { id: 'prepare', type: 'set', values: { prepared: true } },
  { id: 'approve', type: 'manual_approval', title: 'Ship?', reviewers: ['role:admin'] },
];

describe('the audit log of run actions', () => {
  it('records cancel, retry, rerun and resume by an API key once each: the key and its owner, api, the caller’s address', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const key = as(a.adminKey.token, ip);
    const runAction = (action: string, executionId: string) =>
      key(action === 'cancel' ? cancelHandler : action === 'retry' ? retryHandler : action === 'rerun' ? rerunHandler : resumeHandler, {
        path: `/api/v1/executions/${executionId}/${action}`,
        params: { executionId },
        ...(action === 'cancel' ? { body: { reason: 'not today' } } : {}),
      });

    const waiting = await runOf(a, APPROVAL);
    expect((await work(waiting)).status).toBe('WAITING_APPROVAL');
    const cancelled = await runAction('cancel', waiting.executionId);
    expect(cancelled.status, cancelled.body).toBe(200);
    expect(cancelled.json.status).toBe('CANCELLED');

    const failing = await runOf(a, [
      { id: 'prepare', type: 'set', values: { a: 1 } },
      { id: 'boom', type: 'fail', message: 'no' },
    ]);
    expect((await work(failing)).status).toBe('FAILED');
    const retried = await runAction('retry', failing.executionId);
    expect(retried.status, retried.body).toBe(202);

    const rerun = await runAction('rerun', waiting.executionId);
    expect(rerun.status, rerun.body).toBe(202);
    const newRun = rerun.json.executionId as string;
    expect(newRun).not.toBe(waiting.executionId);

    const stopped = await interrupted(a);
    const resumed = await runAction('resume', stopped.executionId);
    expect(resumed.status, resumed.body).toBe(200);
    expect(resumed.json.status).toBe('RUNNING');

    const session = await sessionOf(a.admin.email);
    const log = await readAll(session, { objectType: 'run' });
    expect(log.map((e) => e.action).sort()).toEqual(['run.cancelled', 'run.rerun', 'run.resumed', 'run.retried']);
    const byKey = { kind: 'key', keyId: a.adminKey.id, userId: a.admin.userId };
    const fromKey = { actor: byKey, channel: 'api', ip, accountId: a.account.accountId };
    expect(only(log, 'run.cancelled', waiting.executionId)).toMatchObject({
      ...fromKey,
      object: { type: 'run', id: waiting.executionId },
      details: { reason: 'not today' },
    });
    expect(only(log, 'run.retried', failing.executionId)).toMatchObject({ ...fromKey, details: { stepId: 'boom' } });
    expect(only(log, 'run.rerun', waiting.executionId)).toMatchObject({ ...fromKey, details: { newExecutionId: newRun } });
    expect(only(log, 'run.resumed', stopped.executionId)).toMatchObject(fromKey);
    for (const e of log) expect(e.actor).toEqual(byKey);
  });

  it('records nothing for a refused run action', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const key = as(a.adminKey.token, ip);
    const done = await runOf(a, [{ id: 'one', type: 'set', values: { a: 1 } }]);
    expect((await work(done)).status).toBe('SUCCEEDED');
    const path = (action: string) => ({
      path: `/api/v1/executions/${done.executionId}/${action}`,
      params: { executionId: done.executionId },
    });
    expectProblem(await key(cancelHandler, { ...path('cancel'), body: {} }), 409, 'EXECUTION_FINISHED');
    expectProblem(await key(retryHandler, path('retry')), 409, 'EXECUTION_NOT_FAILED');
    expectProblem(await key(resumeHandler, path('resume')), 409, 'EXECUTION_NOT_INTERRUPTED');
    const waiting = await runOf(a, APPROVAL);
    expect((await work(waiting)).status).toBe('WAITING_APPROVAL');
    expectProblem(
      await key(rerunHandler, { path: `/api/v1/executions/${waiting.executionId}/rerun`, params: { executionId: waiting.executionId } }),
      409,
      'EXECUTION_IN_PROGRESS',
    );
    // Another account's key: not found, nothing in either log.
    const other = await givenAccount();
    const theirs = as(other.adminKey.token, ip);
    expectProblem(
      await theirs(cancelHandler, {
        path: `/api/v1/executions/${waiting.executionId}/cancel`,
        params: { executionId: waiting.executionId },
        body: {},
      }),
      404,
      'EXECUTION_NOT_FOUND',
    );
    expect((await read(waiting)).status).toBe('WAITING_APPROVAL');
    expect(await readAll(await sessionOf(a.admin.email), { objectType: 'run' })).toEqual([]);
    expect(await readAll(await sessionOf(other.admin.email), { objectType: 'run' })).toEqual([]);
  });

  it('records a redelivery once, by the API or a channel’s console page (a concurrent one finds it in progress, records nothing)', async () => {
    const a = await givenAccount();
    const channel = await createChannel(adminSession(a), { type: 'email', name: 'mail', from: 'approvals@example.com' });
    const e = await runOf(a, [
      { id: 'gate', type: 'manual_approval', title: 'Ship?', reviewers: ['role:admin'], notify: [{ channel: 'mail' }] },
    ]);
    expect((await work(e)).status).toBe('WAITING_APPROVAL');
    const params = { executionId: e.executionId };
    const delivered = (attempts: number) =>
      eventually(
        async () =>
          (
            await invoke(
              deliveriesHandler,
              apiEvent({ path: `/api/v1/executions/${e.executionId}/deliveries`, params, headers: bearer(a.adminKey.token) }),
            )
          ).json.items as any[],
        (items) => items.length === 1 && items[0].state === 'DELIVERED' && items[0].attempts.length === attempts,
        30_000,
      );
    const [sent] = await delivered(1);
    expect(sent).toMatchObject({ kind: 'approval-request', target: `mail: ${a.admin.email}` });
    const deliveryId = sent.deliveryId as string;

    // Through the API: two at once, one is queued.
    const apiIp = freshIp();
    const token = await sessionOf(a.admin.email);
    const redeliver = () => as(token, apiIp)(redeliverHandler, { path: `/api/deliveries/${deliveryId}/redeliver`, params: { deliveryId } });
    const both = await Promise.all([redeliver(), redeliver()]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
    await delivered(2);

    // From the channel's console page (a form with the session cookie and its CSRF token).
    const pageIp = freshIp();
    const res = (await channelRedeliverHandler(
      {
        ...apiEvent({
          method: 'POST',
          path: `/console/channels/${channel.id}/deliveries/${deliveryId}/redeliver`,
          params: { channelId: channel.id, deliveryId },
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `csrf=${csrfToken(token)}`,
          sourceIp: pageIp,
        }),
        cookies: [`flowgate_session=${token}`],
      },
      lambdaContext(),
    )) as { statusCode: number; body?: string };
    expect(res.statusCode, res.body).toBe(303);

    const log = await readAll(token, { objectType: 'delivery' });
    expect(log.map((x) => [x.action, x.object.id])).toEqual([
      ['delivery.redelivered', deliveryId],
      ['delivery.redelivered', deliveryId],
    ]);
    const entry = { actor: { kind: 'user', userId: a.admin.userId }, object: { type: 'delivery', id: deliveryId } };
    const details = { kind: 'approval-request', from: 'DELIVERED' };
    expect(log[0]).toMatchObject({ ...entry, channel: 'console', ip: pageIp, details });
    expect(log[1]).toMatchObject({ ...entry, channel: 'api', ip: apiIp, details });
  });
});

describe('the audit log of schedules and channels', () => {
  it('records each schedule change and "run now" once, with actor, channel, address and object', async () => {
    const a = await givenAccount();
    const wf = await createWorkflow(
      { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
      {
        name: 'scheduled',
        definition: WorkflowDefinition.parse({ steps: [{ id: 'one', type: 'set', values: { a: 1 } }] }),
        recovery: false,
        editors: [],
      },
    );
    const ip = freshIp();
    const session = await sessionOf(a.admin.email);
    const call = as(session, ip);
    const created = await call(createScheduleHandler, {
      path: `/api/workflows/${wf.workflowId}/schedules`,
      params: { id: wf.workflowId },
      body: { name: 'nightly', expression: 'cron(0 9 * * ? *)' },
    });
    expect(created.status, created.body).toBe(201);
    const id = created.json.id as string;
    const update = (body: object) =>
      call(updateScheduleHandler, { method: 'PUT', path: `/api/schedules/${id}`, params: { scheduleId: id }, body });
    expect((await update({ enabled: false })).status).toBe(200);
    expect((await update({ enabled: true })).status).toBe(200);
    const ran = await call(runScheduleHandler, { path: `/api/schedules/${id}/run`, params: { scheduleId: id } });
    expect(ran.status, ran.body).toBe(202);
    expect((await call(deleteScheduleHandler, { method: 'DELETE', path: `/api/schedules/${id}`, params: { scheduleId: id } })).status).toBe(
      204,
    );

    const log = await readAll(session, { objectType: 'schedule' });
    expect(log.map((e) => e.action)).toEqual([
      'schedule.deleted',
      'schedule.run',
      'schedule.resumed',
      'schedule.paused',
      'schedule.created',
    ]);
    const byAdmin = { actor: { kind: 'user', userId: a.admin.userId }, channel: 'api', ip, object: { type: 'schedule', id } };
    for (const action of ['schedule.created', 'schedule.paused', 'schedule.resumed', 'schedule.deleted'])
      expect(only(log, action, id)).toMatchObject(byAdmin);
    expect(only(log, 'schedule.created', id)).toMatchObject({
      object: { name: 'nightly' },
      details: { workflowId: wf.workflowId, enabled: true },
    });
    expect(only(log, 'schedule.run', id)).toMatchObject({
      ...byAdmin,
      details: { executionId: ran.json.executionId, workflowId: wf.workflowId },
    });
  });

  it('records each channel change and test once, and nothing for a refused one', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const session = await sessionOf(a.admin.email);
    const call = as(session, ip);
    const created = await call(createChannelHandler, {
      path: '/api/channels',
      body: { type: 'email', name: 'mail', from: 'approvals@example.com' },
    });
    expect(created.status, created.body).toBe(201);
    const id = created.json.id as string;
    const at = `/api/channels/${id}`;
    const params = { channelId: id };
    expect((await call(updateChannelHandler, { method: 'PUT', path: at, params, body: { name: 'mail-2' } })).status).toBe(200);
    const tested = await call(testChannelHandler, { path: `${at}/test`, params, body: {} });
    expect(tested.json).toMatchObject({ ok: true, status: 200 });
    // Refused: another channel of the same name (409) records nothing.
    expect(
      (await call(createChannelHandler, { path: '/api/channels', body: { type: 'email', name: 'MAIL-2', from: 'x@example.com' } })).status,
    ).toBe(409);
    expect((await call(deleteChannelHandler, { method: 'DELETE', path: at, params })).status).toBe(204);

    const log = await readAll(session, { objectType: 'channel' });
    expect(log.map((e) => e.action)).toEqual(['channel.deleted', 'channel.tested', 'channel.updated', 'channel.created']);
    const byAdmin = { actor: { kind: 'user', userId: a.admin.userId }, channel: 'api', ip, object: { type: 'channel', id } };
    expect(only(log, 'channel.created', id)).toMatchObject({ ...byAdmin, object: { name: 'mail' }, details: { channelType: 'email' } });
    expect(only(log, 'channel.updated', id)).toMatchObject({ ...byAdmin, object: { name: 'mail-2' }, details: { changed: ['name'] } });
    expect(only(log, 'channel.tested', id)).toMatchObject({ ...byAdmin, details: { ok: true, status: 200 } });
    expect(only(log, 'channel.deleted', id)).toMatchObject({ ...byAdmin, details: { channelType: 'email' } });
  });
});
