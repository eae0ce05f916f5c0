import * as z from 'zod';
import { RunEvent } from './run-events.ts';

/**
 * The parts of a run's stored state (`Execution`, ./execution.ts): its status, its steps' states,
 * where it is inside a loop, and what a decision or a callback report recorded for its worker.
 */
export const ExecutionStatus = z.enum([
  'PENDING',
  'RUNNING',
  'WAITING_APPROVAL',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'INTERRUPTED',
  'WAITING_CALLBACK',
]);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;
export const TERMINAL: readonly ExecutionStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** A run in one of these states is in progress: it is in the active index and a restart interrupts it. */
export const IN_PROGRESS: readonly ExecutionStatus[] = ['PENDING', 'RUNNING', 'WAITING_APPROVAL', 'WAITING_CALLBACK'];
export const Trigger = z.enum(['webhook', 'api', 'rerun', 'schedule']);

/** `status`: the HTTP status of an `http_request` that answered outside 2xx. */
export const RunError = z.object({ code: z.string(), message: z.string(), status: z.number().int().optional() });
export type RunError = z.infer<typeof RunError>;

const StepStateFields = {
  stepId: z.string(),
  type: z.string(),
  status: z.enum(['PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED', 'WAITING', 'CANCELLED']),
  startedAt: z.number().optional(),
  finishedAt: z.number().optional(),
  error: RunError.optional(),
  /** How many times the step was entered, when more than once (a retry re-enters the step that failed). */
  attempts: z.number().int().optional(),
  /** The attempt a step with a `retry` policy is in, past its first (`shared/engine/step-retry.ts`). */
  tries: z.number().int().optional(),
  /** A `switch`: the case taken (its index, or `default`) and the step it named. */
  branch: z.object({ case: z.union([z.number().int(), z.literal('default')]), next: z.string() }).optional(),
};
/** A `for_each`: how many items, which iteration it is in (0-based; `items` once done), its nested steps' states in that iteration. */
export const StepState = z.object({
  ...StepStateFields,
  items: z.number().int().optional(),
  iteration: z.number().int().optional(),
  steps: z.array(z.object(StepStateFields)).optional(),
});
export type StepState = z.infer<typeof StepState>;
export type NestedStepState = NonNullable<StepState['steps']>[number];

/**
 * Where a run is inside a `for_each` (the step at `nextStep`): its items (evaluated once, when the
 * loop started), the iteration, the nested step to run next, and the results of the iterations done.
 */
export const LoopPosition = z.object({
  stepId: z.string(),
  items: z.array(z.unknown()),
  iteration: z.number().int(),
  next: z.number().int(),
  results: z.array(z.unknown()),
});
export type LoopPosition = z.infer<typeof LoopPosition>;

/** `$trigger` of a webhook run, kept only when its workflow reads `$trigger`: the request's headers (no credentials) and the sender's event name. */
export const TriggerContext = z.object({ headers: z.record(z.string(), z.string()), event: z.string().optional() });
export type TriggerContext = z.infer<typeof TriggerContext>;

/**
 * An approval decision recorded on the run that waited for it, for its worker to apply: the step's
 * output and the form values, or the failure it causes; and its event, for the notifications.
 */
export const RecordedDecision = z.object({
  approvalId: z.string(),
  stepId: z.string(),
  at: z.number(),
  output: z.object({
    decision: z.enum(['approve', 'reject']),
    comment: z.string().nullable(),
    decidedBy: z.string(),
    formData: z.record(z.string(), z.unknown()),
  }),
  fails: z.object({ code: z.enum(['APPROVAL_REJECTED', 'APPROVAL_EXPIRED']), message: z.string(), stepMessage: z.string() }).optional(),
  event: RunEvent,
});
export type RecordedDecision = z.infer<typeof RecordedDecision>;

/**
 * What ended a wait_for_callback (a report, the deadline), recorded on the run for its worker to
 * apply; a success's output stays on the callback item (the worker reads it there).
 */
export const RecordedReport = z.object({
  callbackId: z.string(),
  stepId: z.string(),
  at: z.number(),
  outcome: z.enum(['success', 'failure', 'timeout']),
  event: RunEvent,
});
export type RecordedReport = z.infer<typeof RecordedReport>;
