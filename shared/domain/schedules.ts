import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import { db, tableName } from '../clients.ts';
import type { Plan } from '../config.ts';
import { getAccount } from '../db/entities/account.ts';
import { type Execution, getExecution, IN_PROGRESS, newEvent, type RunEvent } from '../db/entities/execution.ts';
import { getIdempotencyRecord, idempotencyPut } from '../db/entities/idempotency.ts';
import {
  countOutcome,
  deleteScheduleItem,
  disableSchedule,
  enabledCountUpdate,
  firedUpdate,
  getSchedule,
  listWorkflowSchedules,
  markSynced,
  pageAllSchedules,
  replaceSchedule,
  type Schedule,
  scheduleItem,
  skippedUpdate,
} from '../db/entities/schedule.ts';
import { getUser } from '../db/entities/user.ts';
import { getWorkflow, type Workflow, workflowKey } from '../db/entities/workflow.ts';
import { hashRequest, StartGuardFailed, startRun } from '../engine/runs.ts';
import { notifyWorkflowEvents } from '../engine/notify.ts';
import { applyVariableDefaults } from '../engine/variables.ts';
import { AppError, conflict, type FieldError, forbidden, isConditionFailure, notFound, validationFailed } from '../errors.ts';
import { newId, newTokenId } from '../ids.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { clock, fireTimes, RETRY_WINDOW_MS } from '../schedules/clock.ts';
import { formatInZone, isValidTimezone, parseScheduleExpression } from '../schedules/expression.ts';
import type { CreateScheduleBody, UpdateScheduleBody } from '../schemas/schedules.ts';
import type { Principal } from './principal.ts';
import { canEditWorkflow, requireWorkflow } from './workflows.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** Enabled schedules per plan (README "Schedules"); undefined = unlimited. */
export const SCHEDULE_LIMITS: Record<Plan, number | undefined> = { free: 0, pro: 5, team: 50, enterprise: undefined };

/** How many fire times a schedule shows. */
const SHOWN_FIRE_TIMES = 3;

const iso = (t: number | undefined, timezone: string) => (t === undefined ? null : formatInZone(t, timezone));

/** What the console sees; `nextFireTimes` from the later of now and `startAt`. */
export const scheduleView = (s: Schedule, now = Date.now()) => ({
  id: s.scheduleId,
  workflowId: s.workflowId,
  name: s.name,
  expression: s.expression,
  timezone: s.timezone,
  variables: s.variables,
  enabled: s.enabled,
  overlap: s.overlap,
  startAt: iso(s.startAt, s.timezone),
  endAt: iso(s.endAt, s.timezone),
  nextFireTimes: s.enabled ? fireTimes(s, now - 1, SHOWN_FIRE_TIMES).map((t) => formatInZone(t, s.timezone)) : [],
  lastFiredAt: s.lastFiredAt ?? null,
  lastExecutionId: s.lastExecutionId ?? null,
  lastFailure: s.lastFailure ?? null,
  fires: s.fires,
  skips: s.skips,
  failures: s.failures,
  createdBy: s.createdBy,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

const scheduleNotFound = (scheduleId: string) => notFound('SCHEDULE_NOT_FOUND', `Schedule ${scheduleId} does not exist.`);

/** A schedule of the caller's account (another account's id is indistinguishable from none). */
async function requireSchedule(p: SessionPrincipal, scheduleId: string): Promise<Schedule> {
  const s = await getSchedule(p.accountId, scheduleId, true);
  if (!s) throw scheduleNotFound(scheduleId);
  return s;
}

async function requireEditableWorkflow(p: SessionPrincipal, workflowId: string): Promise<Workflow> {
  const workflow = await requireWorkflow(p.accountId, workflowId);
  if (!canEditWorkflow(p, workflow))
    throw forbidden('NOT_WORKFLOW_EDITOR', 'You need edit permission on the workflow to manage its schedules.');
  return workflow;
}

/**
 * The settings' own rules, each error with its path: the expression and the timezone as EventBridge
 * accepts them, the variables against the workflow's declared types, `endAt` after `startAt`, and an
 * enabled schedule must have a fire time ahead (an `at()` in the past would never fire).
 */
function checkSettings(s: Schedule, workflow: Workflow, now: number): void {
  const errors: FieldError[] = [];
  const parsed = parseScheduleExpression(s.expression);
  if (!parsed.ok) errors.push({ path: 'expression', message: parsed.message });
  if (!isValidTimezone(s.timezone)) errors.push({ path: 'timezone', message: 'must be an IANA time zone name, like Europe/Berlin' });
  const vars = applyVariableDefaults(workflow.definition, s.variables);
  if (!vars.ok) errors.push(...vars.errors);
  if (s.startAt !== undefined && s.endAt !== undefined && s.endAt <= s.startAt)
    errors.push({ path: 'endAt', message: 'must be after startAt' });
  if (errors.length === 0 && s.enabled && fireTimes(s, now, 1).length === 0)
    errors.push({ path: 'expression', message: 'has no fire time ahead (before endAt): it would never fire' });
  if (errors.length) throw validationFailed(errors);
}

const planLimit = (plan: Plan | undefined, limit: number | undefined) =>
  forbidden('PLAN_LIMIT_REACHED', `The ${plan ?? 'current'} plan allows ${limit ?? 0} enabled schedules.`);

async function limitOf(accountId: string) {
  const account = await getAccount(accountId);
  return { plan: account?.plan, limit: account ? SCHEDULE_LIMITS[account.plan] : 0 };
}

const toMs = (v: string | null | undefined) => (v === null || v === undefined ? undefined : Date.parse(v));

/**
 * Create: the item first (with the enabled count, in one transaction: parallel creates never pass the
 * plan's limit), then its timer; a timer that cannot be made takes the item back, and whatever a crash
 * leaves between the two the sweep repairs (`repairScheduleDrift`).
 */
export async function createSchedule(
  p: SessionPrincipal,
  workflowId: string,
  input: z.output<typeof CreateScheduleBody>,
  now = Date.now(),
): Promise<Schedule> {
  const workflow = await requireEditableWorkflow(p, workflowId);
  const s: Schedule = {
    scheduleId: newId('sch'),
    accountId: p.accountId,
    workflowId,
    name: input.name ?? input.expression,
    expression: input.expression,
    timezone: input.timezone,
    variables: input.variables,
    enabled: input.enabled,
    overlap: input.overlap,
    startAt: toMs(input.startAt),
    endAt: toMs(input.endAt),
    createdBy: p.userId,
    createdAt: now,
    updatedAt: now,
    fires: 0,
    skips: 0,
    failures: 0,
  };
  checkSettings(s, workflow, now);
  const { plan, limit } = s.enabled ? await limitOf(p.accountId) : { plan: undefined, limit: undefined };
  if (s.enabled && limit === 0) throw planLimit(plan, limit);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: scheduleItem(s), ConditionExpression: 'attribute_not_exists(PK)' } },
          ...(s.enabled ? [enabledCountUpdate(p.accountId, 1, limit)] : []),
          // A workflow deleted meanwhile takes its schedules with it: none may follow.
          {
            ConditionCheck: {
              TableName: tableName(),
              Key: workflowKey(p.accountId, workflowId),
              ConditionExpression: 'attribute_exists(PK)',
            },
          },
        ],
      }),
    );
  } catch (e) {
    if (!isConditionFailure(e)) throw e;
    if (!(await getWorkflow(p.accountId, workflowId))) throw notFound('WORKFLOW_NOT_FOUND', `Workflow ${workflowId} does not exist.`);
    throw planLimit(plan, limit);
  }
  if (s.enabled) {
    try {
      await clock().put(s);
      await markSynced(s);
    } catch (e) {
      await deleteScheduleItem(s).catch((error: unknown) =>
        logger.error('schedule left for the sweep', { scheduleId: s.scheduleId, error: error as Error }),
      );
      throw e;
    }
  }
  return s;
}

export async function updateSchedule(
  p: SessionPrincipal,
  scheduleId: string,
  patch: z.output<typeof UpdateScheduleBody>,
  now = Date.now(),
): Promise<Schedule> {
  const s = await requireSchedule(p, scheduleId);
  const workflow = await requireEditableWorkflow(p, s.workflowId);
  const { startAt, endAt, ...rest } = patch;
  const next: Schedule = {
    ...s,
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
    ...(startAt !== undefined ? { startAt: toMs(startAt) } : {}),
    ...(endAt !== undefined ? { endAt: toMs(endAt) } : {}),
    updatedAt: Math.max(now, s.updatedAt + 1),
  };
  checkSettings(next, workflow, now);
  const enabling = next.enabled && !s.enabled;
  const { plan, limit } = enabling ? await limitOf(p.accountId) : { plan: undefined, limit: undefined };
  if (enabling && limit === 0) throw planLimit(plan, limit);
  if (!(await replaceSchedule(s, next, limit))) {
    const now2 = await getSchedule(p.accountId, scheduleId, true);
    if (enabling && now2?.updatedAt === s.updatedAt) throw planLimit(plan, limit);
    throw notFound('SCHEDULE_NOT_FOUND', 'The schedule was changed or deleted meanwhile; read it again.');
  }
  try {
    if (next.enabled) await clock().put(next);
    else await clock().remove(scheduleId);
    await markSynced(next);
  } catch (e) {
    // Reconcile: the item goes back to what it was, so item and timer agree (else the sweep repairs it).
    await replaceSchedule(next, { ...s, updatedAt: next.updatedAt + 1 }, undefined).catch((error: unknown) =>
      logger.error('schedule left for the sweep', { scheduleId, error: error as Error }),
    );
    throw e;
  }
  return next;
}

/** The item first; a timer left behind (the clock failed) fires nothing and the sweep deletes it. */
async function deleteOne(s: Pick<Schedule, 'accountId' | 'scheduleId'>): Promise<boolean> {
  const deleted = await deleteScheduleItem(s);
  await clock()
    .remove(s.scheduleId)
    .catch((error: unknown) => logger.error('schedule timer left for the sweep', { scheduleId: s.scheduleId, error: error as Error }));
  return deleted;
}

export async function deleteSchedule(p: SessionPrincipal, scheduleId: string): Promise<void> {
  const s = await requireSchedule(p, scheduleId);
  await requireEditableWorkflow(p, s.workflowId);
  if (!(await deleteOne(s))) throw scheduleNotFound(scheduleId);
}

/** A deleted workflow's schedules go with it (`removeWorkflow`). */
export async function removeWorkflowSchedules(accountId: string, workflowId: string): Promise<void> {
  const schedules = await listWorkflowSchedules(accountId, workflowId);
  await Promise.all(schedules.map((s) => deleteOne(s)));
}

/** Every member of the account may read a workflow's schedules, as they may read the workflow. */
export async function listSchedules(p: SessionPrincipal, workflowId: string, now = Date.now()) {
  await requireWorkflow(p.accountId, workflowId);
  const items = await listWorkflowSchedules(p.accountId, workflowId);
  return { items: items.sort((a, b) => b.createdAt - a.createdAt).map((s) => scheduleView(s, now)), nextCursor: null };
}

export const scheduleDetail = async (p: SessionPrincipal, scheduleId: string) => scheduleView(await requireSchedule(p, scheduleId));

// ---- Fires ----------------------------------------------------------------------------------------

export type Fire = { accountId: string; scheduleId: string; scheduledAt: number; manual?: { userId: string } };
export type FireOutcome =
  | { outcome: 'fired'; execution: Execution }
  | { outcome: 'skipped'; runningExecutionId: string }
  | { outcome: 'failed'; code: string; message: string }
  | { outcome: 'duplicate' }
  | { outcome: 'ignored'; reason: 'gone' | 'disabled' };

/** Why the schedule's account may not start runs from it any more: gone, a plan without schedules, its creator disabled or removed. */
async function accessProblem(s: Schedule, manual: boolean): Promise<{ code: string; message: string } | undefined> {
  const [account, creator] = await Promise.all([getAccount(s.accountId), manual ? undefined : getUser(s.accountId, s.createdBy)]);
  if (!account || SCHEDULE_LIMITS[account.plan] === 0)
    return { code: 'PLAN_LIMIT_REACHED', message: `The ${account?.plan ?? 'current'} plan has no schedules.` };
  if (!manual && (!creator || creator.disabled))
    return { code: 'CREATOR_DISABLED', message: 'The member who created the schedule was disabled or removed.' };
  return undefined;
}

/** A schedule's event to the workflow's notification targets (`executionId`: the fire's run, the run that made it skip, or '' for none). */
async function notifySchedule(s: Schedule, workflow: Pick<Workflow, 'workflowId' | 'version'> | undefined, event: RunEvent) {
  if (!workflow) return;
  const { executionId } = event;
  await notifyWorkflowEvents({ accountId: s.accountId, executionId, workflowId: workflow.workflowId, workflowVersion: workflow.version }, [
    event,
  ]);
}

const eventData = (s: Schedule, fire: Fire, extra: Record<string, unknown> = {}) => ({
  scheduleId: s.scheduleId,
  scheduledAt: fire.scheduledAt,
  manual: Boolean(fire.manual),
  ...extra,
});

async function failed(s: Schedule, workflow: Workflow | undefined, fire: Fire, code: string, message: string, now: number, stop: boolean) {
  await countOutcome(s, 'failures', { code, message, at: now });
  emit('ScheduleFailed');
  if (stop && (await disableSchedule(s, now))) await clock().remove(s.scheduleId);
  await notifySchedule(s, workflow, newEvent('', 'schedule.failed', eventData(s, fire, { error: { code, message } }), now));
  logger.warn('schedule fire failed', { scheduleId: s.scheduleId, code });
  return { outcome: 'failed' as const, code, message };
}

/** An `at()` schedule fires once: its item is disabled after its fire (its AWS schedule deletes itself). */
async function afterScheduledFire(s: Schedule, fire: Fire, now: number) {
  if (fire.manual) return;
  const parsed = parseScheduleExpression(s.expression);
  if (parsed.ok && parsed.value.kind === 'at' && (await disableSchedule(s, now))) await clock().remove(s.scheduleId);
}

/**
 * One fire (the `schedule-fire` function's work, and `run` now): starts the run exactly as the v1 start
 * does, trigger `schedule`. Idempotent on (schedule, scheduled time): the fire's key is claimed in the
 * transaction that writes the run (or the skip), so duplicate deliveries start one run. With `skip`, the
 * same transaction holds only while the schedule's last run is the one this fire saw finished: two fires
 * at once cannot both start a run. A manual fire is never a duplicate (a fresh key each).
 */
export async function fireSchedule(fire: Fire, now = Date.now()): Promise<FireOutcome> {
  let s = await getSchedule(fire.accountId, fire.scheduleId, true);
  if (!s) {
    // A timer without its item (deleted meanwhile, or drift): it goes now rather than at the next sweep.
    if (!fire.manual)
      await clock()
        .remove(fire.scheduleId)
        .catch(() => undefined);
    return { outcome: 'ignored', reason: 'gone' };
  }
  if (!fire.manual && !s.enabled) return { outcome: 'ignored', reason: 'disabled' };
  const scope = `SCH#${s.scheduleId}`;
  const key = fire.manual ? `manual-${newTokenId()}` : String(fire.scheduledAt);
  const request = { scheduleId: s.scheduleId, scheduledAt: fire.scheduledAt };
  if (!fire.manual && (await getIdempotencyRecord(s.accountId, scope, key))) return { outcome: 'duplicate' };
  const [problem, workflow] = await Promise.all([accessProblem(s, Boolean(fire.manual)), getWorkflow(s.accountId, s.workflowId)]);
  if (problem) {
    if (fire.manual) throw forbidden(problem.code, problem.message);
    return failed(s, workflow, fire, problem.code, problem.message, now, true);
  }
  if (!workflow) return failed(s, undefined, fire, 'WORKFLOW_NOT_FOUND', 'The workflow no longer exists.', now, true);
  for (let attempt = 0; attempt < 5; attempt++) {
    const last = s.overlap === 'skip' && s.lastExecutionId ? await getExecution(s.accountId, s.lastExecutionId) : undefined;
    if (last && IN_PROGRESS.includes(last.status)) {
      try {
        await db().send(
          new TransactWriteCommand({
            TransactItems: [
              idempotencyPut(s.accountId, scope, key, { executionId: last.executionId, requestHash: hashRequest(request), createdAt: now }),
              skippedUpdate(s),
            ],
          }),
        );
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        if (!fire.manual && (await getIdempotencyRecord(s.accountId, scope, key))) return { outcome: 'duplicate' };
        s = await getSchedule(fire.accountId, fire.scheduleId, true);
        if (!s) return { outcome: 'ignored', reason: 'gone' };
        continue;
      }
      emit('ScheduleSkipped');
      await notifySchedule(s, workflow, newEvent(last.executionId, 'schedule.skipped', eventData(s, fire), now));
      await afterScheduledFire(s, fire, now);
      if (fire.manual)
        throw conflict(
          'SCHEDULE_RUN_IN_PROGRESS',
          `Run ${last.executionId} of this schedule has not finished; with overlap "skip" this fire was skipped.`,
        );
      return { outcome: 'skipped', runningExecutionId: last.executionId };
    }
    try {
      const seen = s;
      const { execution, replayed } = await startRun(
        {
          workflow,
          trigger: 'schedule',
          variables: s.variables,
          startedBy: fire.manual?.userId ?? s.createdBy,
          idempotency: { scope, key, request, label: 'scheduled time' },
          guard: (e) => firedUpdate(seen, e.executionId, now),
          extra: { scheduleId: s.scheduleId, scheduledAt: fire.scheduledAt, ...(fire.manual ? { manualFire: true } : {}) },
        },
        now,
      );
      if (replayed) return { outcome: 'duplicate' };
      emit('ScheduleFired');
      await notifySchedule(s, workflow, newEvent(execution.executionId, 'schedule.fired', eventData(s, fire), now));
      await afterScheduledFire(s, fire, now);
      return { outcome: 'fired', execution };
    } catch (e) {
      if (e instanceof StartGuardFailed) {
        s = await getSchedule(fire.accountId, fire.scheduleId, true);
        if (!s) return { outcome: 'ignored', reason: 'gone' };
        continue;
      }
      // The key was claimed meanwhile by a skip of the same fire (its record names the run that made it skip).
      if (e instanceof AppError && !fire.manual && (e.kind === 'conflict' || e.kind === 'not_found')) return { outcome: 'duplicate' };
      if (e instanceof AppError && e.kind === 'invalid') {
        // The workflow changed since: the schedule's variables no longer fit its declared types.
        const outcome = await failed(s, workflow, fire, e.code, e.message, now, false);
        if (fire.manual) throw e;
        await afterScheduledFire(s, fire, now);
        return outcome;
      }
      throw e;
    }
  }
  throw new Error(`schedule ${fire.scheduleId}: the fire lost five races in a row`);
}

/** `POST /api/schedules/{id}/run`: a manual fire, now (it obeys `overlap`: 409 while a run is unfinished with `skip`). */
export async function runScheduleNow(p: SessionPrincipal, scheduleId: string, now = Date.now()): Promise<Execution> {
  const s = await requireSchedule(p, scheduleId);
  await requireEditableWorkflow(p, s.workflowId);
  const outcome = await fireSchedule({ accountId: p.accountId, scheduleId, scheduledAt: now, manual: { userId: p.userId } }, now);
  if (outcome.outcome === 'fired') return outcome.execution;
  throw scheduleNotFound(scheduleId);
}

// ---- Drift ----------------------------------------------------------------------------------------

/**
 * The sweep's repair: every enabled schedule with a fire ahead has its timer, with its current settings, and every timer has an
 * enabled schedule (created, deleted or disabled on one side while the other failed, or by hand in the
 * console). An enabled `at()` whose time and retry window have passed (its fire never reached the item) is disabled.
 * Returns what it repaired (also the `ScheduleDriftRepaired` metric).
 */
export async function repairScheduleDrift(now = Date.now()): Promise<{ created: number; updated: number; deleted: number }> {
  const timers = new Set(await clock().list());
  const wanted = new Set<string>();
  let created = 0;
  let updated = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await pageAllSchedules(100, startKey);
    for (const s of page.items) {
      if (!s.enabled) continue;
      if (fireTimes(s, now, 1).length === 0) {
        // Past its retry window too: no delivery of its fire can come any more.
        const parsed = parseScheduleExpression(s.expression);
        const done = parsed.ok && parsed.value.kind === 'at' && fireTimes(s, now - RETRY_WINDOW_MS, 1).length === 0;
        if (done && !timers.has(s.scheduleId)) await disableSchedule(s, now);
        if (timers.has(s.scheduleId)) wanted.add(s.scheduleId);
        continue;
      }
      wanted.add(s.scheduleId);
      // Missing, or written with older settings (an update whose timer write failed and was not put back).
      if (!timers.has(s.scheduleId) || s.syncedAt !== s.updatedAt) {
        await clock().put(s);
        await markSynced(s);
        if (timers.has(s.scheduleId)) updated++;
        else created++;
      }
    }
    startKey = page.lastKey;
  } while (startKey);
  let deleted = 0;
  for (const id of timers) {
    if (wanted.has(id)) continue;
    await clock().remove(id);
    deleted++;
  }
  if (created + updated + deleted > 0) {
    emit('ScheduleDriftRepaired', created + updated + deleted);
    logger.warn('schedule drift repaired', { created, updated, deleted });
  }
  return { created, updated, deleted };
}
