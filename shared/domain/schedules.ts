import { writeAll } from '../db/transact.ts';
import { audited, changedFields } from '../db/audited.ts';
import { changedMeanwhile } from '../db/conflicts.ts';
import type { TransactItem } from '../db/transact.ts';
import type { z } from 'zod';
import type { Plan } from '../config.ts';
import { getAccount } from '../db/entities/account.ts';
import {
  deleteScheduleItem,
  getSchedule,
  listWorkflowSchedules,
  markSynced,
  replaceSchedule,
  type Schedule,
} from '../db/entities/schedule.ts';
import { getWorkflow, type Workflow, workflowStillThere } from '../db/entities/workflow.ts';
import { newScheduleItems } from '../db/entities/schedule-account.ts';
import { listScheduleEvents } from '../db/entities/schedule-events.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { applyVariableDefaults } from '../engine/variables.ts';
import { definitionOf } from '../engine/versions.ts';
import { type FieldError, forbidden, isConditionFailure, isTransactionConflict, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { clock, fireTimes } from '../schedules/clock.ts';
import { formatInZone, isValidTimezone, parseScheduleExpression } from '../schedules/expression.ts';
import type { CreateScheduleBody, UpdateScheduleBody } from '../schemas/schedules.ts';
import type { Principal } from './principal.ts';
import { canEditWorkflow, requireWorkflow } from './workflow-access.ts';

// A workflow's schedules as the console manages them: create, update, delete, read. A schedule's
// fires are in schedule-fires.ts, the sweep's repair of timers in schedule-drift.ts.

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** Enabled schedules per plan (docs/schedules.md); undefined = unlimited. */
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

export const scheduleNotFound = (scheduleId: string) => notFound('SCHEDULE_NOT_FOUND', `Schedule ${scheduleId} does not exist.`);

/** A schedule of the caller's account (another account's id is indistinguishable from none). */
export async function requireSchedule(p: SessionPrincipal, scheduleId: string): Promise<Schedule> {
  const s = await getSchedule(p.accountId, scheduleId, true);
  if (!s) throw scheduleNotFound(scheduleId);
  return s;
}

export async function requireEditableWorkflow(p: SessionPrincipal, workflowId: string): Promise<Workflow> {
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
  const vars = applyVariableDefaults(definitionOf(workflow.definition), s.variables);
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
    // A rate's first fire is at creation (EventBridge's rule without StartDate); kept until the expression changes.
    anchorAt: now,
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
    await writeAll([
      ...newScheduleItems(s, limit),
      // A workflow deleted meanwhile takes its schedules with it: none may follow.
      workflowStillThere(p.accountId, workflowId),
      audited(
        p,
        'schedule.created',
        scheduleObject(s),
        { workflowId, expression: s.expression, timezone: s.timezone, enabled: s.enabled },
        now,
      ),
    ]);
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
  const updatedAt = Math.max(now, s.updatedAt + 1);
  const next: Schedule = {
    ...s,
    ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)),
    ...(startAt !== undefined ? { startAt: toMs(startAt) } : {}),
    ...(endAt !== undefined ? { endAt: toMs(endAt) } : {}),
    updatedAt,
  };
  // A new expression starts counting now (a rate fires at once); any other change keeps the fire times.
  next.anchorAt = next.expression === s.expression ? (s.anchorAt ?? s.updatedAt) : updatedAt;
  checkSettings(next, workflow, now);
  const enabling = next.enabled && !s.enabled;
  const { plan, limit } = enabling ? await limitOf(p.accountId) : { plan: undefined, limit: undefined };
  if (enabling && limit === 0) throw planLimit(plan, limit);
  // A transaction in flight on the schedule or the enabled count: nothing was written.
  const replaced = await replaceSchedule(s, next, limit, [scheduleChangeEntry(p, s, next, patch, now)]).catch((e: unknown) => {
    throw isTransactionConflict(e) ? changedMeanwhile('schedule') : e;
  });
  if (!replaced) {
    const now2 = await getSchedule(p.accountId, scheduleId, true);
    if (enabling && now2?.updatedAt === s.updatedAt) throw planLimit(plan, limit);
    // Lost to another change: 409 while it is there (as a workflow answers), 404 once it is gone.
    if (now2) throw changedMeanwhile('schedule');
    throw notFound('SCHEDULE_NOT_FOUND', 'The schedule was deleted meanwhile.');
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

const scheduleObject = (s: Pick<Schedule, 'scheduleId' | 'name'>) => ({ type: 'schedule', id: s.scheduleId, name: s.name });

/** `schedule.paused` / `schedule.resumed` when a patch only turns it off or on, else `schedule.updated` with the fields it set. */
function scheduleChangeEntry(p: SessionPrincipal, s: Schedule, next: Schedule, patch: Record<string, unknown>, now: number) {
  const changed = changedFields(patch);
  if (changed.length === 1 && changed[0] === 'enabled' && next.enabled !== s.enabled)
    return audited(p, next.enabled ? 'schedule.resumed' : 'schedule.paused', scheduleObject(next), {}, now);
  return audited(p, 'schedule.updated', scheduleObject(next), { changed }, now);
}

/** The item first; a timer left behind (the clock failed) fires nothing and the sweep deletes it. */
async function deleteOne(s: Pick<Schedule, 'accountId' | 'scheduleId'>, extra: readonly TransactItem[] = []): Promise<boolean> {
  const deleted = await deleteScheduleItem(s, extra);
  await clock()
    .remove(s.scheduleId)
    .catch((error: unknown) => logger.error('schedule timer left for the sweep', { scheduleId: s.scheduleId, error: error as Error }));
  return deleted;
}

/** Its workflow's editors may delete a schedule; its creator and admins one whose workflow is gone (a crash mid-delete). */
async function requireRemovable(p: SessionPrincipal, s: Schedule): Promise<void> {
  const workflow = await getWorkflow(p.accountId, s.workflowId);
  if (workflow ? canEditWorkflow(p, workflow) : p.role === 'admin' || s.createdBy === p.userId) return;
  throw forbidden('NOT_WORKFLOW_EDITOR', 'You need edit permission on the workflow to manage its schedules.');
}

export async function deleteSchedule(p: SessionPrincipal, scheduleId: string): Promise<void> {
  const s = await requireSchedule(p, scheduleId);
  await requireRemovable(p, s);
  if (!(await deleteOne(s, [audited(p, 'schedule.deleted', scheduleObject(s), { workflowId: s.workflowId })]))) {
    // Paused or resumed meanwhile (the delete is conditional on what it read): 409 while it is there.
    if (await getSchedule(p.accountId, scheduleId, true)) throw changedMeanwhile('schedule');
    throw scheduleNotFound(scheduleId);
  }
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

/** `GET /api/schedules/{id}/events`: the schedule's own event log, by its seq (404 for a schedule of another account). */
export async function pageScheduleEvents(p: SessionPrincipal, scheduleId: string, limit: number, cursor: string | undefined) {
  await requireSchedule(p, scheduleId);
  const binding = `schedule-events:${p.accountId}:${scheduleId}`;
  const page = await listScheduleEvents(p.accountId, scheduleId, limit, decodeCursor(cursor, binding));
  return { items: page.items, nextCursor: encodeCursor(page.lastKey, binding) };
}
