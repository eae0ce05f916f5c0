import * as z from 'zod';
import { ExecutionStatus, RunError, StepState, Trigger } from '../db/entities/execution-state.ts';
import { idOf } from './common.ts';
import { EventType } from '../db/event-types.ts';

const cursor = z.string().max(4096).optional();
const limit = z.coerce.number().int().min(1).max(100).default(25);
/** A step of a run as the API shows it (a named schema of the OpenAPI document, as are the records below). */
const Step = StepState.meta({ id: 'Step' });
const list = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), nextCursor: z.string().nullable() });

export const PageQuery = z.object({ limit, cursor });
export const WorkflowParams = z.object({ id: idOf('WORKFLOW_NOT_FOUND', 'Workflow') });
export const V1WorkflowParams = z.object({ workflowId: idOf('WORKFLOW_NOT_FOUND', 'Workflow') });
export const ExecutionParams = z.object({ executionId: idOf('EXECUTION_NOT_FOUND', 'Execution') });
export const ArtifactParams = z.object({
  // An artifact is looked up by both ids at once: either unknown is ARTIFACT_NOT_FOUND.
  executionId: idOf('ARTIFACT_NOT_FOUND', 'Artifact of execution'),
  artifactId: idOf('ARTIFACT_NOT_FOUND', 'Artifact'),
});
export const ExecutionsQuery = z.object({
  limit,
  cursor,
  /** Any string: a malformed id filters like an unknown one (an empty page). */
  workflowId: z.string().max(128).optional(),
  status: ExecutionStatus.optional(),
  trigger: Trigger.optional(),
});
export const DownloadQuery = z.object({ redirect: z.enum(['0', '1']).optional() });

export const StartRunBody = z.object({ variables: z.record(z.string(), z.unknown()).default({}) });
export const CancelBody = z.object({ reason: z.string().max(500).optional() });

export const WorkflowSummary = z
  .object({
    workflowId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    variables: z.record(z.string(), z.object({ type: z.string(), default: z.unknown() })),
    steps: z.array(z.object({ id: z.string(), type: z.string(), title: z.string().nullable() })),
    recovery: z.boolean(),
    createdAt: z.number(),
    updatedAt: z.number(),
  })
  .meta({ id: 'WorkflowSummary' });
export const WorkflowSummaryList = list(WorkflowSummary);

export const WorkflowView = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    definition: z.unknown(),
    recovery: z.boolean(),
    ownerId: z.string(),
    editors: z.array(z.string()),
    createdAt: z.number(),
    updatedAt: z.number(),
    version: z.number(),
    code: z
      .object({ key: z.string(), origin: z.string().nullable() })
      .nullable()
      .describe('Managed by code (docs/workflows-as-code.md): its key and where its file lives; null when made in the console or the API.'),
  })
  .meta({ id: 'Workflow' });
export const WorkflowViewList = list(WorkflowView);

export const ExecutionView = z
  .object({
    executionId: z.string(),
    workflowId: z.string(),
    webhookId: z.string().optional(),
    trigger: Trigger,
    scheduleId: z.string().optional().describe('Runs a schedule started: the schedule.'),
    scheduledAt: z
      .number()
      .optional()
      .describe('Runs a schedule started: the time the fire was due (epoch ms; the time of the request for a manual fire).'),
    manualFire: z.boolean().optional().describe('Runs started by `POST /api/schedules/{scheduleId}/run`.'),
    status: ExecutionStatus,
    variables: z.record(z.string(), z.unknown()),
    startedAt: z.number(),
    updatedAt: z.number(),
    finishedAt: z.number().optional(),
    currentStepId: z.string().nullable().optional(),
    /** Inside a `for_each`: the loop step, the iteration it is in (0-based) and its number of items. */
    loop: z.object({ stepId: z.string(), iteration: z.number(), items: z.number() }).optional(),
    steps: z.array(Step),
    error: RunError.optional(),
    approvalId: z.string().optional(),
    callbackId: z.string().optional(),
    cancelRequested: z.boolean().optional(),
    interruptedAt: z.number().optional(),
    interruptReason: z.enum(['restart', 'crash']).optional(),
    rerunOf: z.string().optional(),
    replayOf: z
      .string()
      .optional()
      .describe("A webhook run started by replaying a request of the webhook's inbound log: that request's id."),
    retries: z.number().optional(),
  })
  .meta({ id: 'Execution' });
export const ExecutionList = list(ExecutionView);
export const ExecutionResult = z.object({
  executionId: z.string(),
  status: ExecutionStatus,
  output: z.unknown(),
  variables: z.record(z.string(), z.unknown()),
  error: RunError.nullable(),
});
export const EventList = list(
  z
    .object({
      eventId: z.string(),
      type: EventType,
      at: z.number(),
      executionId: z.string(),
      seq: z
        .number()
        .int()
        .optional()
        .describe(
          'Increasing in the order the run wrote its events, unique within the run (absent only on events older than sequence numbers).',
        ),
      data: z.record(z.string(), z.unknown()),
    })
    .meta({ id: 'Event' }),
);
export const ArtifactList = list(
  z.object({
    artifactId: z.string(),
    name: z.string(),
    contentType: z.string(),
    size: z.number(),
    createdAt: z.number(),
    stepId: z.string(),
  }),
);
export const DownloadLink = z.object({ url: z.string(), expiresAt: z.number() });
