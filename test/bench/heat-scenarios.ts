import { handler as fireHandler } from '../../functions/schedule/fire.ts';
import { handler as sweepHandler } from '../../functions/sweep/scheduled.ts';
import { resetConfig } from '../../shared/config.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { INBOUND_BODY_BYTES } from '../../shared/db/entities/inbound-request.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { createSchedule } from '../../shared/domain/schedules.ts';
import { flushRefusals } from '../../shared/domain/inbound-record.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import type { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { CreateScheduleBody } from '../../shared/schemas/schedules.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnTable } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { remindedApprovalFlow, setFlow, tenStepFlow } from './flows.ts';
import { difference, type Load, perUnit } from './heat-model.ts';
import { type Access, recordHeat, unrecorded } from './heat-record.ts';
import { holdCaches } from './scenarios.ts';
import { type Admin, approve, type Hook, httpFlushes, listen, refuse, report, trigger, warm, work, workerFlushes } from './heat-work.ts';
import { HEAT_RATE_LIMITS } from './heat.ts';

/** Units per unit of work, per key family and per item family (`perUnit`). */
export type PerUnit = { keys: Load[]; items: Load[] };
/** What the heat model measures on the emulators; each is units per unit of work, named by its work. */
export type Measurements = {
  oneStep: PerUnit;
  tenStep: PerUnit;
  manyAccounts: PerUnit;
  reminder: PerUnit;
  fire: PerUnit;
  drift: PerUnit;
  pass: PerUnit;
  /** (b)'s HTTP functions: what one instance's flush of its counts writes, per function (`httpFlushes`). */
  httpFlush: Record<string, PerUnit>;
  /** What the runs worker's flushes wrote for the runs of each work, per run, as if a flush per message (`workerFlushes`). */
  workerFlush: Record<'oneStep' | 'tenStep' | 'manyAccounts' | 'fire', PerUnit>;
  /** A refused trigger (`refusals`): the request, its instance's flush of its counts, and one write of the inbound log. */
  refused: { request: PerUnit; countsFlush: PerUnit; log: PerUnit };
};
/** A work with runs: what the runs did, and what the runs worker's flushes wrote for them, each per run. */
type WithFlush = { run: PerUnit; flush: PerUnit };

/** How many units of each work the bench measures (enough for whole worker batches and a full sweep page). */
export const SIZES = { runs: 20, tenStep: 10, accounts: 10, reminders: 25, schedules: 100, fires: 20, refusals: 20 } as const;

type Account = Awaited<ReturnType<typeof givenAccount>>;
const session = (a: Account) =>
  ({ kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' }) as const;
const adminOf = (a: Account): Admin => ({
  accountId: a.account.accountId,
  userId: a.admin.userId,
  keyId: a.adminKey.id,
  token: a.adminKey.token,
});

async function hookOn(a: Account, definition: WorkflowDefinition, name: string): Promise<Hook> {
  const key = await createKey(session(a), { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const workflow = await createWorkflow(session(a), { name, definition, recovery: false, editors: [] });
  const webhook = await createWebhook(session(a), CreateWebhookBody.parse({ workflowId: workflow.workflowId, name, apiKeyId: key.id }));
  return { key, workflow, webhook };
}

/** Which account each run is of (the runs' keys need it). */
const owners = new Map<string, string>();
const ownerOf = (id: string) => owners.get(id) as string;
const triggered = async (hooks: readonly Hook[], runs: number) => {
  const ids = await trigger(hooks, runs);
  for (const [i, id] of ids.entries()) owners.set(id, (hooks[i % hooks.length] as Hook).webhook.accountId);
  return ids;
};

/** Webhook runs of `hooks`, round-robin, trigger 200 → SUCCEEDED: after one run of each as a warm-up (a key's first use of the day writes more). */
async function webhookRuns(hooks: readonly Hook[], runs: number): Promise<WithFlush> {
  await work(ownerOf, await triggered(hooks, hooks.length), ['SUCCEEDED']);
  await flushCounts();
  await warm(hooks);
  workerFlushes.length = 0;
  const { accesses } = await recordHeat(async () => work(ownerOf, await triggered(hooks, runs), ['SUCCEEDED']));
  return { run: perUnit(accesses, runs), flush: perUnit(workerFlushes, runs) };
}

/**
 * Scenario (b)'s run, `runs` of them: to its approval; approved through the route, on to its callback;
 * reported through the route, to SUCCEEDED; then the sweep at the reminder's time, which deletes the
 * handled approval's due item (what it does with it).
 */
async function tenStepRuns(a: Account, runs: number): Promise<WithFlush> {
  const listener = await listen();
  process.env.HTTP_STEP_ALLOWLIST = '127.0.0.1/32';
  resetConfig();
  try {
    const hook = await hookOn(a, tenStepFlow(listener.base), 'ten steps');
    const admin = adminOf(a);
    const lifetime = async (n: number, record: (fn: () => Promise<unknown>) => Promise<Access[]>) => {
      await warm([hook], [admin]);
      const ids: string[] = [];
      const accesses = await record(async () => {
        ids.push(...(await triggered([hook], n)));
        await work(ownerOf, ids, ['WAITING_APPROVAL']);
      });
      const approvals = await unrecorded(() =>
        Promise.all(ids.map(async (id) => (await getExecution(ownerOf(id), id))?.approvalId as string)),
      );
      await warm([hook], [admin]);
      accesses.push(
        ...(await record(async () => {
          for (const ap of approvals) await approve(admin, ap);
          await work(ownerOf, ids, ['WAITING_CALLBACK']);
        })),
      );
      await warm([hook], [admin]);
      accesses.push(
        ...(await record(async () => {
          for (const id of ids) await report(listener.callbacks.get(id) as { url: string; token: string });
          await work(ownerOf, ids, ['SUCCEEDED']);
          await nudgeDueApprovals(Date.now() + 3601_000);
        })),
      );
      return accesses;
    };
    await lifetime(1, async (fn) => {
      await fn();
      return [];
    });
    workerFlushes.length = 0;
    const accesses = await lifetime(runs, async (fn) => (await recordHeat(fn)).accesses);
    return { run: perUnit(accesses, runs), flush: perUnit(workerFlushes, runs) };
  } finally {
    listener.close();
  }
}

/**
 * Refused triggers of one webhook, `n` of them, each from an address of its own with a body the inbound
 * log keeps whole at its limit (an attacker's flood: docs/webhooks.md "Why was my request refused?"):
 * per request, with the instance's writes of its counts and of its log kept apart; its log's write (at
 * most a second, `shared/domain/inbound-record.ts`) measured as one flush of the newest it keeps.
 */
async function refusals(a: Account, n: number): Promise<Measurements['refused']> {
  const hook = await hookOn(a, setFlow(1), 'flooded');
  const body = { pad: 'x'.repeat(INBOUND_BODY_BYTES) };
  await refuse(hook, '198.51.100.250', body); // the first refusal of the day counts more (its day's stats)
  await warm([hook]);
  await flushRefusals();
  await flushRefusals(Date.now() + 3_600_000); // the log's last write counts as just made while the requests are recorded
  const before = httpFlushes.get('refused trigger')?.length ?? 0;
  const { accesses } = await recordHeat(async () => {
    for (let i = 0; i < n; i++) await refuse(hook, `198.51.100.${i + 1}`, body);
  });
  const counted = httpFlushes.get('refused trigger')?.slice(before) ?? [];
  const log = await recordHeat(() => flushRefusals());
  return {
    request: perUnit(accesses, n),
    countsFlush: perUnit(counted.flat(), Math.max(1, counted.length)),
    log: perUnit(log.accesses, 1),
  };
}

/** Reminders: pending approvals whose reminder is due, one sweep's nudges, less a nudge pass with nothing due. */
async function reminders(a: Account, n: number): Promise<PerUnit> {
  const workflow = await createWorkflow(session(a), { name: 'reminded', definition: remindedApprovalFlow(), recovery: false, editors: [] });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
    owners.set(execution.executionId, a.account.accountId);
    ids.push(execution.executionId);
  }
  await work(ownerOf, ids, ['WAITING_APPROVAL']);
  const now = Date.now();
  const idle = await recordHeat(() => nudgeDueApprovals(now));
  const due = await recordHeat(() => nudgeDueApprovals(now + 61_000));
  if (due.result.reminders !== n) throw new Error(`${due.result.reminders} reminders sent of ${n}`);
  const [with_, without] = [perUnit(due.accesses, n), perUnit(idle.accesses, n)];
  return { keys: difference(with_.keys, without.keys), items: difference(with_.items, without.items) };
}

/**
 * Schedules: the drift repair's reads per schedule (a pass over `n` schedules, less one over none), then
 * fires of `fires` of them through the fire function's handler with their runs to SUCCEEDED, each
 * schedule having fired once before (its last run is read: overlap "skip", the default).
 */
async function schedules(a: Account, n: number, fires: number): Promise<{ drift: PerUnit; fire: WithFlush }> {
  const none = await recordHeat(() => repairScheduleDrift());
  const workflow = await createWorkflow(session(a), { name: 'scheduled', definition: setFlow(1), recovery: false, editors: [] });
  const made: string[] = [];
  for (let i = 0; i < n; i++)
    made.push((await createSchedule(session(a), workflow.workflowId, CreateScheduleBody.parse({ expression: 'rate(1 hour)' }))).scheduleId);
  const all = await recordHeat(() => repairScheduleDrift());
  const [with_, without] = [perUnit(all.accesses, n), perUnit(none.accesses, n)];
  const drift = { keys: difference(with_.keys, without.keys), items: difference(with_.items, without.items) };
  const fireAll = async (at: number) => {
    const ids: string[] = [];
    for (const scheduleId of made.slice(0, fires)) {
      const out = await fireHandler({ accountId: a.account.accountId, scheduleId, scheduledTime: new Date(at).toISOString() });
      if (out.outcome !== 'fired') throw new Error(`schedule fire: ${out.outcome}`);
      owners.set(out.executionId, a.account.accountId);
      ids.push(out.executionId);
    }
    await work(ownerOf, ids, ['SUCCEEDED']);
  };
  const t = Math.floor(Date.now() / 60_000) * 60_000;
  await fireAll(t - 60_000);
  await flushCounts();
  workerFlushes.length = 0;
  const fired = await recordHeat(() => fireAll(t));
  return { drift, fire: { run: perUnit(fired.accesses, fires), flush: perUnit(workerFlushes, fires) } };
}

/**
 * Every measurement of the heat model, on the emulators (a table of its own: the sweeps read every
 * item of their kind). Accounts: a team account with a one-step webhook for (a) and the ten-step
 * workflow for (b); `SIZES.accounts` team accounts, one webhook each, for (c) (a worker batch then holds
 * several accounts' runs, as it does on a queue shared by many); an enterprise account for (d).
 */
export async function measureHeat(): Promise<Measurements> {
  const table = process.env.TABLE_NAME;
  await useOwnTable();
  process.env.RATE_LIMITS = JSON.stringify(HEAT_RATE_LIMITS);
  // Capacity is sized for the queued path: it writes more per run (its start, claim and end: 8.2 units
  // to the table and 5 to the active index for a one-step run, against 3 and none for a run that
  // finishes in its trigger) and it is what any workflow with an external step takes.
  process.env.INLINE_RUNS = 'off';
  resetConfig();
  holdCaches(3_600_000);
  try {
    return await measureAll();
  } finally {
    holdCaches();
    process.env.TABLE_NAME = table;
    delete process.env.INLINE_RUNS;
    resetConfig();
  }
}

async function measureAll(): Promise<Measurements> {
  // Nothing pending yet: what a sweep pass reads when nothing is due.
  const pass = perUnit((await recordHeat(() => sweepHandler())).accesses, 1);
  const team = await givenAccount({ plan: 'team' });
  const oneStep = await webhookRuns([await hookOn(team, setFlow(1), 'one step')], SIZES.runs);
  httpFlushes.clear();
  const tenStep = await tenStepRuns(team, SIZES.tenStep);
  const httpFlush = Object.fromEntries([...httpFlushes].map(([fn, flushes]) => [fn, perUnit(flushes.flat(), flushes.length)]));
  const many: Hook[] = [];
  for (let i = 0; i < SIZES.accounts; i++) many.push(await hookOn(await givenAccount({ plan: 'team' }), setFlow(1), 'one step'));
  const manyAccounts = await webhookRuns(many, SIZES.runs);
  const big = await givenAccount({ plan: 'enterprise' });
  const { drift, fire } = await schedules(big, SIZES.schedules, SIZES.fires);
  const reminder = await reminders(big, SIZES.reminders);
  const refused = await refusals(team, SIZES.refusals);
  return {
    oneStep: oneStep.run,
    tenStep: tenStep.run,
    manyAccounts: manyAccounts.run,
    reminder,
    fire: fire.run,
    drift,
    pass,
    httpFlush,
    workerFlush: { oneStep: oneStep.flush, tenStep: tenStep.flush, manyAccounts: manyAccounts.flush, fire: fire.flush },
    refused,
  };
}
