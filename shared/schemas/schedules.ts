import * as z from 'zod';
import { OVERLAP } from '../db/entities/schedule.ts';
import { idOf } from './common.ts';
import { ExecutionView } from './engine.ts';

export const ScheduleParams = z.object({ scheduleId: idOf('SCHEDULE_NOT_FOUND', 'Schedule') });
export const WorkflowSchedulesParams = z.object({ workflowId: idOf('WORKFLOW_NOT_FOUND', 'Workflow') });

/** An instant: ISO 8601 with its offset (`2026-12-01T09:00:00+01:00`, or `Z`). */
const Instant = z.iso.datetime({ offset: true }).describe('ISO 8601 with an offset or Z');
const settings = {
  name: z.string().trim().min(1).max(200),
  expression: z
    .string()
    .max(256)
    .describe(
      'EventBridge Scheduler syntax: `cron(min hour day-of-month month day-of-week year)`, `rate(n minutes|hours|days)` or `at(yyyy-mm-ddThh:mm:ss)`',
    ),
  timezone: z.string().max(64).describe('IANA time zone the expression is read in'),
  variables: z.record(z.string(), z.unknown()).describe("The run's variables, checked against the workflow's declared types"),
  enabled: z.boolean(),
  overlap: z
    .enum(OVERLAP)
    .describe('`skip`: a fire while a run of this schedule is unfinished starts nothing (counted as skipped); `allow`: it starts another'),
};

export const CreateScheduleBody = z.object({
  name: settings.name.optional(),
  expression: settings.expression,
  timezone: settings.timezone.default('UTC'),
  variables: settings.variables.default({}),
  enabled: settings.enabled.default(true),
  overlap: settings.overlap.default('skip'),
  startAt: Instant.optional(),
  endAt: Instant.optional(),
});

/** A partial update; `startAt`/`endAt` null clears them. */
export const UpdateScheduleBody = z.object({
  name: settings.name.optional(),
  expression: settings.expression.optional(),
  timezone: settings.timezone.optional(),
  variables: settings.variables.optional(),
  enabled: settings.enabled.optional(),
  overlap: settings.overlap.optional(),
  startAt: Instant.nullable().optional(),
  endAt: Instant.nullable().optional(),
});

export const ScheduleView = z.object({
  id: z.string(),
  workflowId: z.string(),
  name: z.string(),
  expression: z.string(),
  timezone: z.string(),
  variables: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
  overlap: z.enum(OVERLAP),
  startAt: z.string().nullable(),
  endAt: z.string().nullable(),
  nextFireTimes: z.array(z.string()).describe("The next 3 fire times (ISO 8601 in the schedule's timezone); empty when disabled"),
  lastFiredAt: z.number().nullable(),
  lastExecutionId: z.string().nullable(),
  lastFailure: z.object({ code: z.string(), message: z.string(), at: z.number() }).nullable(),
  fires: z.number(),
  skips: z.number(),
  failures: z.number(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export const ScheduleList = z.object({ items: z.array(ScheduleView), nextCursor: z.string().nullable() });
export const ScheduleRun = ExecutionView;
