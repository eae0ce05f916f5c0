import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
} from '@aws-sdk/client-scheduler';
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { config } from '../config.ts';
import type { Schedule } from '../db/entities/schedule.ts';
import { nextFireTimes, parseScheduleExpression } from './expression.ts';
import { withPlugins } from '../sdk-plugins.ts';

/** What a clock needs of a schedule to fire it. */
export type Timer = Pick<Schedule, 'accountId' | 'scheduleId' | 'expression' | 'timezone' | 'startAt' | 'endAt' | 'updatedAt'> &
  Partial<Pick<Schedule, 'anchorAt'>>;

/**
 * Where a rate counts from (its first fire; then every period): `startAt`, else the schedule's anchor,
 * set when it was created and again only when its expression changes (a rename, new variables or a
 * re-enable keep it), as EventBridge Scheduler starts a rate schedule without StartDate at once. An
 * item from before anchors were kept counts from its last change, as its AWS schedule does.
 */
export const rateAnchor = (t: Timer) => t.startAt ?? t.anchorAt ?? t.updatedAt;

/** EventBridge Scheduler refuses a recurring schedule's StartDate more than 5 minutes in the past: what is sent stays within 4. */
const PAST_START_MS = 4 * 60_000;

/**
 * The StartDate to send (epoch ms), so that the AWS schedule fires when the local clock does. A rate:
 * its anchor when that is ahead, or when this very version set it (a create, a new expression: the first
 * fire is at once); else the next fire on the anchor's grid (an update or a re-creation by the sweep
 * keeps the fire times; a StartDate long past would be refused). A cron: `startAt`, unless it is past (it
 * bounds nothing then). An at(): `startAt` as it is (EventBridge ignores it).
 */
export function startDate(t: Timer, now: number): number | undefined {
  const parsed = parseScheduleExpression(t.expression);
  if (!parsed.ok || parsed.value.kind === 'at') return t.startAt;
  if (parsed.value.kind === 'cron') return t.startAt !== undefined && t.startAt >= now - PAST_START_MS ? t.startAt : undefined;
  const anchor = rateAnchor(t);
  const setByThisVersion = t.startAt === undefined && anchor === t.updatedAt && anchor >= now - PAST_START_MS;
  if (anchor >= now || setByThisVersion) return anchor;
  return nextFireTimes(parsed.value, { timezone: t.timezone, after: now - 1, startAt: anchor, endAt: t.endAt, count: 1 })[0];
}

/**
 * What the fire function receives: the schedule and the time it was due (EventBridge Scheduler fills in
 * `<aws.scheduler.scheduled-time>`; the local scheduler the time `nextFireTimes` gave).
 */
export const FireEvent = z.object({
  accountId: z.string().min(1),
  scheduleId: z.string().min(1),
  scheduledTime: z.iso.datetime({ offset: true }),
});
export type FireEvent = z.infer<typeof FireEvent>;

/**
 * The one place that talks to the scheduler: EventBridge Scheduler on AWS, the local stack's in-process
 * scheduler locally. Every timer exists exactly while its schedule item is enabled; the schedules domain
 * and the sweep's drift repair go through this interface only, so both run the same code in both places.
 */
export interface ScheduleClock {
  /** Create or replace the schedule's timer (idempotent). */
  put(t: Timer): Promise<void>;
  /** Delete it; a timer that does not exist is no error. */
  remove(scheduleId: string): Promise<void>;
  /** The ids of every timer. */
  list(): Promise<string[]>;
}

const client = (() => {
  let c: SchedulerClient | undefined;
  return () => (c ??= withPlugins(new SchedulerClient({})));
})();

/**
 * How long EventBridge Scheduler keeps trying to hand a fire to Lambda (its retry policy's maximum event
 * age), before its DLQ. It invokes asynchronously: this covers invoke failures only (the function
 * missing, the role refused, the invoke throttled), never an error the function throws.
 */
export const RETRY_WINDOW_MS = 3600 * 1000;

/**
 * How long Lambda's async queue keeps a fire it accepted (the fire function's maximum event age,
 * functions/async-invokes.ts): through its two retries of an error (about 1 and 3 minutes later) and
 * any wait while the function is throttled. Older, it goes to the on-failure queue unrun. Well below the
 * 24 hours a fire's idempotency key is kept, so a late retry still finds the key its first try claimed.
 */
export const FIRE_MAX_EVENT_AGE_MS = 3600 * 1000;

/** Until when after its time a fire may still arrive: handed over within the scheduler's window, then run within Lambda's. */
export const FIRE_DELIVERY_WINDOW_MS = RETRY_WINDOW_MS + FIRE_MAX_EVENT_AGE_MS;

/** What the sweep repairs is also what a client token makes safe to send twice: one token per version of the schedule. */
const token = (t: Timer) => `${t.scheduleId}-${t.updatedAt}`.slice(0, 64);

/**
 * The window a recurring schedule's fires are spread over (EventBridge Scheduler's flexible time
 * window, in minutes: 1 is its least): a fire of a `cron` or a `rate` starts within a minute after its
 * time, so 100,000 schedules due at the same minute reach the scheduler's invocations quota and Lambda
 * over the minute, not in its first second (docs/schedules.md "Fires, overlap and limits"). A
 * one-time `at()` fires on time.
 */
export const FIRE_WINDOW_MINUTES = 1;

/** How long after its time a schedule's fire may start: the window for a `cron` or a `rate`, 0 for an `at()`. */
export function fireWindowMs(t: Pick<Timer, 'expression'>): number {
  const parsed = parseScheduleExpression(t.expression);
  return parsed.ok && parsed.value.kind !== 'at' ? FIRE_WINDOW_MINUTES * 60_000 : 0;
}

/** The CreateSchedule's FlexibleTimeWindow: the window of `fireWindowMs`, or none. */
export function flexibleTimeWindow(t: Pick<Timer, 'expression'>) {
  const ms = fireWindowMs(t);
  return ms > 0 ? { Mode: 'FLEXIBLE' as const, MaximumWindowInMinutes: ms / 60_000 } : { Mode: 'OFF' as const };
}

/**
 * Where in its window a schedule's fires start, locally (infra/local/scheduler.ts): a fixed offset,
 * from a hash of the schedule's id, under `fireWindowMs` (EventBridge picks a moment within the window
 * for each fire; a fixed one keeps a schedule's fires a period apart and is what the tests can check).
 */
export function fireOffsetMs(t: Pick<Timer, 'scheduleId' | 'expression'>): number {
  const window = fireWindowMs(t);
  if (window === 0) return 0;
  return createHash('sha256').update(t.scheduleId).digest().readUInt32BE(0) % window;
}

/** The stack's scheduler settings a schedule is created with. */
export type SchedulerSettings = { group: string; role: string; target: string; dlq: string };

/**
 * The CreateSchedule (and UpdateSchedule) input of a schedule: named by its id in the stack's group,
 * read in its timezone, its fires spread over the window of `flexibleTimeWindow`, the fire function as target with the schedule and the
 * scheduled time as input, a retry policy of an hour and the DLQ for invoke failures; a one-time `at()` deletes itself.
 */
export function createScheduleInput(t: Timer, s: SchedulerSettings, now = Date.now()) {
  const parsed = parseScheduleExpression(t.expression);
  const start = startDate(t, now);
  return {
    Name: t.scheduleId,
    GroupName: s.group,
    ScheduleExpression: t.expression,
    ScheduleExpressionTimezone: t.timezone,
    ...(start !== undefined ? { StartDate: new Date(start) } : {}),
    ...(t.endAt !== undefined ? { EndDate: new Date(t.endAt) } : {}),
    FlexibleTimeWindow: flexibleTimeWindow(t),
    State: 'ENABLED' as const,
    // A one-time schedule deletes itself once it fired; the fire disables its item.
    ActionAfterCompletion: parsed.ok && parsed.value.kind === 'at' ? ('DELETE' as const) : ('NONE' as const),
    Target: {
      Arn: s.target,
      RoleArn: s.role,
      Input: JSON.stringify({ accountId: t.accountId, scheduleId: t.scheduleId, scheduledTime: '<aws.scheduler.scheduled-time>' }),
      // The scheduler invokes asynchronously: this policy and DLQ see only a failed invoke (it is tried
      // again for an hour, then dead-lettered). An error the fire function throws is Lambda's async queue's
      // to retry (twice), then its on-failure queue's (functions/async-invokes.ts, docs/schedules.md).
      RetryPolicy: { MaximumEventAgeInSeconds: RETRY_WINDOW_MS / 1000, MaximumRetryAttempts: 20 },
      DeadLetterConfig: { Arn: s.dlq },
    },
    ClientToken: token(t),
  };
}

/** EventBridge Scheduler, in the stack's group: one schedule per enabled schedule, named by its id. */
export function awsClock(): ScheduleClock {
  const group = () => config().SCHEDULE_GROUP as string;
  // Creating needs them all; the fire function only deletes (its own ARN would be a cycle in the stack).
  const settings = () => {
    const { SCHEDULER_ROLE_ARN, SCHEDULE_TARGET_ARN, SCHEDULE_DLQ_ARN } = config();
    if (!SCHEDULER_ROLE_ARN || !SCHEDULE_TARGET_ARN || !SCHEDULE_DLQ_ARN)
      throw new Error('creating schedules needs SCHEDULER_ROLE_ARN, SCHEDULE_TARGET_ARN and SCHEDULE_DLQ_ARN');
    return { group: group(), role: SCHEDULER_ROLE_ARN, target: SCHEDULE_TARGET_ARN, dlq: SCHEDULE_DLQ_ARN };
  };
  const input = (t: Timer) => createScheduleInput(t, settings());
  return {
    async put(t) {
      try {
        await client().send(new CreateScheduleCommand(input(t)));
      } catch (e) {
        if (!(e instanceof ConflictException)) throw e;
        await client().send(new UpdateScheduleCommand(input(t)));
      }
    },
    async remove(scheduleId) {
      try {
        await client().send(new DeleteScheduleCommand({ Name: scheduleId, GroupName: group() }));
      } catch (e) {
        if (!(e instanceof ResourceNotFoundException)) throw e;
      }
    },
    async list() {
      const names: string[] = [];
      let NextToken: string | undefined;
      do {
        const page = await client().send(new ListSchedulesCommand({ GroupName: group(), NextToken, MaxResults: 100 }));
        names.push(...(page.Schedules ?? []).flatMap((s) => (s.Name ? [s.Name] : [])));
        NextToken = page.NextToken;
      } while (NextToken);
      return names;
    },
  };
}

/**
 * The timers of this process (local mode): kept here, fired by the local stack's scheduler
 * (infra/local/scheduler.ts), which subscribes to changes. Without a local stack (tests of single
 * handlers) nothing fires them.
 */
export class LocalClock implements ScheduleClock {
  readonly timers = new Map<string, Timer>();
  onChange: (scheduleId: string) => void = () => undefined;
  async put(t: Timer) {
    this.timers.set(t.scheduleId, { ...t });
    this.onChange(t.scheduleId);
  }
  async remove(scheduleId: string) {
    this.timers.delete(scheduleId);
    this.onChange(scheduleId);
  }
  async list() {
    return [...this.timers.keys()];
  }
}

let local: LocalClock | undefined;
let aws: ScheduleClock | undefined;

/** The clock: EventBridge Scheduler when the stack set its group (AWS), else this process's local clock. */
export function clock(): ScheduleClock {
  if (!config().SCHEDULE_GROUP) return localClock();
  aws ??= awsClock();
  return aws;
}

export function localClock(): LocalClock {
  local ??= new LocalClock();
  return local;
}

/**
 * The next `count` fire times of a schedule strictly after `after` (epoch ms). A rate's first is its
 * anchor (`rateAnchor`: `startAt`, else its creation or the last change of its expression), then one
 * every period.
 */
export function fireTimes(t: Timer, after: number, count: number): number[] {
  const parsed = parseScheduleExpression(t.expression);
  if (!parsed.ok) return [];
  const startAt = parsed.value.kind === 'rate' ? rateAnchor(t) : t.startAt;
  return nextFireTimes(parsed.value, { timezone: t.timezone, after, startAt, endAt: t.endAt, count });
}
