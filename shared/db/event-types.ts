import * as z from 'zod';

/**
 * Every event type a run writes to its log and sends to its notification targets: the one list the
 * engine emits from (`newEvent` takes only these), the definition schema accepts subscriptions from
 * (`notifications[].events`), and the OpenAPI document and the event table of docs/runs-and-events.md are checked against.
 * No imports but zod: the entities, the engine and the schemas all read it.
 */
export const EVENT_TYPES = [
  'execution.started',
  'step.started',
  'step.succeeded',
  'step.failed',
  'approval.requested',
  'approval.decided',
  'approval.expired',
  'approval.reminded',
  'approval.escalated',
  'execution.succeeded',
  'execution.failed',
  'execution.cancelled',
  'execution.interrupted',
  'execution.resumed',
  'execution.retried',
  'step.retrying',
  'callback.requested',
  'callback.reported',
  'callback.expired',
  // A schedule's fires (shared/domain/schedules.ts): the fire's run, a fire skipped while a run of the schedule is unfinished, a fire that started nothing.
  'schedule.fired',
  'schedule.skipped',
  'schedule.failed',
] as const;

export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;
