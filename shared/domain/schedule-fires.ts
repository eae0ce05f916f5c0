import { writeAll } from '../db/transact.ts';
import { keptChanging, Refused, refused, retryConflicts } from '../db/conflicts.ts';
import { getAccount } from '../db/entities/account.ts';
import { type Execution, getExecution } from '../db/entities/execution.ts';
import { IN_PROGRESS } from '../db/entities/execution-state.ts';
import { newEvent } from '../db/entities/run-events.ts';
import { getIdempotencyRecord, idempotencyPut, idempotencyScope } from '../db/entities/idempotency.ts';
import {
  countFailure,
  disableSchedule,
  firedUpdate,
  getSchedule,
  type Schedule,
  skippedUpdate,
  takeEventSeq,
} from '../db/entities/schedule.ts';
import { putScheduleEvent, type ScheduleEvent, scheduleEventPut } from '../db/entities/schedule-events.ts';
import { getUser } from '../db/entities/user.ts';
import { getWorkflow, type Workflow } from '../db/entities/workflow.ts';
import { sendUnsentRun } from '../engine/lost-messages.ts';
import { hashRequest, StartGuardFailed, startRun } from '../engine/runs.ts';
import { notifyWorkflowEvents } from '../engine/notify.ts';
import { AppError, conflict, forbidden, isConditionFailure, isTransactionConflict } from '../errors.ts';
import { newTokenId } from '../ids.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { clock, fireTimes } from '../schedules/clock.ts';
import { parseScheduleExpression } from '../schedules/expression.ts';
import { requireEditableWorkflow, requireSchedule, SCHEDULE_LIMITS, scheduleNotFound, type SessionPrincipal } from './schedules.ts';
import { audited } from '../db/audited.ts';
import type { Via } from './principal.ts';

/** `manual`: a person's "run now" (who, and from where for the audit log); else the schedule's timer. */
export type Fire = { accountId: string; scheduleId: string; scheduledAt: number; manual?: { userId: string; via?: Via } };
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

/**
 * A schedule's event to the workflow's notification targets (`executionId`: the fire's run, the run that
 * made it skip, or '' for none), as stored in the schedule's log: with the `seq` its fire took (`takeEventSeq`).
 */
async function notifySchedule(s: Schedule, workflow: Pick<Workflow, 'workflowId' | 'version'> | undefined, event: ScheduleEvent) {
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

/**
 * A failed fire: counted on the schedule, in the same atomic add that takes its event's seq (unless the
 * fire took one already), then the event written to the schedule's log. A schedule gone meanwhile has no log: no event.
 */
async function failed(
  s: Schedule,
  workflow: Workflow | undefined,
  fire: Fire,
  failure: { code: string; message: string },
  now: number,
  stop: boolean,
  taken?: number,
) {
  const { code, message } = failure;
  const seq = await countFailure(s, { code, message, at: now }, taken);
  const event: ScheduleEvent | undefined =
    seq === undefined ? undefined : { ...newEvent('', 'schedule.failed', eventData(s, fire, { error: { code, message } }), now), seq };
  if (event) await putScheduleEvent(s.accountId, s.scheduleId, event);
  emit('ScheduleFailed');
  if (stop && (await disableSchedule(s, now))) await clock().remove(s.scheduleId);
  if (event) await notifySchedule(s, workflow, event);
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
 * A scheduled fire whose key was claimed already: a duplicate delivery, or Lambda's retry of a try that
 * failed after it wrote its run (or its skip). Nothing starts again; what that try may have left undone
 * is done now: its run's message, while the run still waits for it (`keepUnsent`), and an `at()`'s
 * disabling (only while the schedule is still that `at()`: a late retry leaves a rescheduled one alone).
 */
async function alreadyFired(s: Schedule, fire: Fire, executionId: string, now: number): Promise<FireOutcome> {
  if (await sendUnsentRun(s.accountId, executionId))
    logger.warn('schedule fire retried: its run queued now', { scheduleId: s.scheduleId, executionId });
  if (fireTimes(s, fire.scheduledAt - 1, 1)[0] === fire.scheduledAt) await afterScheduledFire(s, fire, now);
  return { outcome: 'duplicate' };
}

/** Tries of a fire that keeps losing its race (each reads the schedule again). */
const FIRE_ATTEMPTS = 8;

/**
 * One fire (the `schedule-fire` function's work, and `run` now): starts the run exactly as the v1 start
 * does, trigger `schedule`. Idempotent on (schedule, scheduled time): the fire's key is claimed in the
 * transaction that writes the run (or the skip), so duplicate deliveries, and Lambda's retries of a
 * fire that threw after that transaction, start one run (`alreadyFired`). With `skip`, the
 * same transaction holds only while the schedule's last run is the one this fire saw finished: two fires
 * at once cannot both start a run. A manual fire is never a duplicate (a fresh key each).
 */
export async function fireSchedule(fire: Fire, now = Date.now()): Promise<FireOutcome> {
  const s = await getSchedule(fire.accountId, fire.scheduleId, true);
  if (!s) {
    // A timer without its item (deleted meanwhile, or drift): it goes now rather than at the next sweep.
    if (!fire.manual)
      await clock()
        .remove(fire.scheduleId)
        .catch(() => undefined);
    return { outcome: 'ignored', reason: 'gone' };
  }
  if (!fire.manual && !s.enabled) return { outcome: 'ignored', reason: 'disabled' };
  const scope = idempotencyScope.scheduleFire(s.scheduleId);
  const key = fire.manual ? `manual-${newTokenId()}` : String(fire.scheduledAt);
  const request = { scheduleId: s.scheduleId, scheduledAt: fire.scheduledAt };
  const earlier = fire.manual ? undefined : await getIdempotencyRecord(s.accountId, scope, key);
  if (earlier) return alreadyFired(s, fire, earlier.executionId, now);
  const [problem, workflow] = await Promise.all([accessProblem(s, Boolean(fire.manual)), getWorkflow(s.accountId, s.workflowId)]);
  if (problem) {
    if (fire.manual) throw forbidden(problem.code, problem.message);
    return failed(s, workflow, fire, problem, now, true);
  }
  if (!workflow) return failed(s, undefined, fire, { code: 'WORKFLOW_NOT_FOUND', message: 'The workflow no longer exists.' }, now, true);
  // A lost race (the schedule's last run or its counts changed since read: the skip's or the start's
  // condition refused it) reads the schedule again and tries again.
  let current: Schedule = s;
  const readAgain = async (): Promise<FireOutcome> => {
    const again = await getSchedule(fire.accountId, fire.scheduleId, true);
    if (!again) return { outcome: 'ignored', reason: 'gone' };
    current = again;
    throw new Refused();
  };
  // The seq of this fire's event: taken from the schedule's counter (one atomic add, in no transaction)
  // when its outcome is about to be written, kept through its retries; a duplicate after it skips it.
  let seq: number | undefined;
  const takeSeq = async () => {
    seq ??= await takeEventSeq(s);
    return seq;
  };
  return retryConflicts(
    async (): Promise<FireOutcome> => {
      const s = current;
      const last = s.overlap === 'skip' && s.lastExecutionId ? await getExecution(s.accountId, s.lastExecutionId) : undefined;
      if (last && IN_PROGRESS.includes(last.status)) {
        const n = await takeSeq();
        if (n === undefined) return { outcome: 'ignored', reason: 'gone' };
        const event: ScheduleEvent = { ...newEvent(last.executionId, 'schedule.skipped', eventData(s, fire), now), seq: n };
        try {
          await writeAll([
            idempotencyPut(s.accountId, scope, key, {
              executionId: last.executionId,
              requestHash: hashRequest(request),
              createdAt: now,
            }),
            skippedUpdate(s),
            scheduleEventPut(s.accountId, s.scheduleId, event),
          ]);
        } catch (e) {
          if (!isConditionFailure(e)) throw e;
          if (!fire.manual && (await getIdempotencyRecord(s.accountId, scope, key))) return { outcome: 'duplicate' };
          return readAgain();
        }
        emit('ScheduleSkipped');
        await notifySchedule(s, workflow, event);
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
        let event: ScheduleEvent | undefined;
        const { execution, replayed } = await startRun(
          {
            workflow,
            trigger: 'schedule',
            variables: s.variables,
            startedBy: fire.manual?.userId ?? s.createdBy,
            // A scheduled fire is retried by Lambda (two more tries): a run whose message could not be
            // sent stays PENDING for the retry to send (`alreadyFired`), rather than ending FAILED and
            // freeing the key for a second run of the same time. A manual fire is a request: as v1's.
            idempotency: { scope, key, request, label: 'scheduled time', keepUnsent: !fire.manual },
            guard: async (e) => {
              const n = await takeSeq();
              if (n === undefined) throw new StartGuardFailed('the schedule is gone');
              const ev: ScheduleEvent = { ...newEvent(e.executionId, 'schedule.fired', eventData(seen, fire), now), seq: n };
              event = ev;
              return [
                firedUpdate(seen, e.executionId, now),
                scheduleEventPut(seen.accountId, seen.scheduleId, ev),
                // A person's "run now" is on the audit log, with the run it started.
                ...(fire.manual
                  ? [
                      audited(
                        { accountId: seen.accountId, userId: fire.manual.userId, via: fire.manual.via },
                        'schedule.run',
                        { type: 'schedule', id: seen.scheduleId, name: seen.name },
                        { executionId: e.executionId, workflowId: seen.workflowId },
                        now,
                      ),
                    ]
                  : []),
              ];
            },
            extra: { scheduleId: s.scheduleId, scheduledAt: fire.scheduledAt, ...(fire.manual ? { manualFire: true } : {}) },
          },
          now,
        );
        if (replayed) return fire.manual ? { outcome: 'duplicate' } : alreadyFired(s, fire, execution.executionId, now);
        emit('ScheduleFired');
        if (event) await notifySchedule(s, workflow, event);
        await afterScheduledFire(s, fire, now);
        return { outcome: 'fired', execution };
      } catch (e) {
        if (e instanceof StartGuardFailed) return readAgain();
        // The key was claimed meanwhile by a skip of the same fire (its record names the run that made it skip).
        if (e instanceof AppError && !fire.manual && (e.kind === 'conflict' || e.kind === 'not_found')) return { outcome: 'duplicate' };
        if (e instanceof AppError && e.kind === 'invalid') {
          // The workflow changed since: the schedule's variables no longer fit its declared types.
          const outcome = await failed(s, workflow, fire, { code: e.code, message: e.message }, now, false, seq);
          if (fire.manual) throw e;
          await afterScheduledFire(s, fire, now);
          return outcome;
        }
        throw e;
      }
    },
    {
      // A lost race, or (on AWS) a transaction in flight on the schedule: read again, try again.
      attempts: FIRE_ATTEMPTS,
      retryOn: (e) => refused(e) || isTransactionConflict(e),
      exhausted: (e) => {
        // A manual fire is a request: 409, try again. A scheduled one fails, and Lambda's async queue tries it again (twice).
        if (fire.manual) return keptChanging('schedule')();
        logger.warn('schedule fire lost every race', { scheduleId: fire.scheduleId, attempts: FIRE_ATTEMPTS, error: e as Error });
        throw new Error(`schedule ${fire.scheduleId}: the fire lost ${FIRE_ATTEMPTS} races in a row`);
      },
    },
  );
}

/** `POST /api/schedules/{id}/run`: a manual fire, now (it obeys `overlap`: 409 while a run is unfinished with `skip`). */
export async function runScheduleNow(p: SessionPrincipal, scheduleId: string, now = Date.now()): Promise<Execution> {
  const s = await requireSchedule(p, scheduleId);
  await requireEditableWorkflow(p, s.workflowId);
  const outcome = await fireSchedule(
    { accountId: p.accountId, scheduleId, scheduledAt: now, manual: { userId: p.userId, via: p.via } },
    now,
  );
  if (outcome.outcome === 'fired') return outcome.execution;
  throw scheduleNotFound(scheduleId);
}
