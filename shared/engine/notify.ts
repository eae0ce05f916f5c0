import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { queue } from '../clients.ts';
import { config } from '../config.ts';
import { RunEvent } from '../db/entities/run-events.ts';
import type { Execution } from '../db/entities/execution.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import type { WorkflowDefinition } from './definition.ts';
import { asksPeople, everyStep } from './every-step.ts';
import { tenantGroup } from './dispatch.ts';
import { runDefinition } from './versions.ts';

/** A notifications-queue message: deliver `event` to target number `target` of the run's workflow. */
export const EventNotice = z.object({
  accountId: z.string(),
  executionId: z.string(),
  target: z.number().int().min(0),
  event: RunEvent,
  /** A workflow's event that no run wrote (a schedule's skip or failure): the targets are this version's. */
  workflow: z.object({ workflowId: z.string(), workflowVersion: z.number() }).optional(),
});
export type EventNotice = z.infer<typeof EventNotice>;
/**
 * A notifications-queue message about an approval whose step has `notify`: `send` its messages
 * (it was requested), or `update` those sent (a vote, a decision, its expiry, its run's cancel);
 * `remind` the reviewers who have not decided, or tell the reviewers an `escalate` added
 * (`shared/domain/nudges.ts`).
 */
export const ApprovalNotice = z.object({
  kind: z.literal('approval'),
  action: z.enum(['send', 'update', 'remind', 'escalate']),
  accountId: z.string(),
  executionId: z.string(),
  approvalId: z.string(),
  /** `remind`: the reminder's number (its messages are new ones, kept beside the first). */
  reminder: z.number().int().min(1).optional(),
});
export type ApprovalNotice = z.infer<typeof ApprovalNotice>;

/** The approval notices of `events`: for approval steps with `notify` only (no definition read beyond the run's cached one). */
function approvalNotices(
  e: { accountId: string; executionId: string; approvalId?: string },
  definition: WorkflowDefinition | undefined,
  events: readonly RunEvent[],
): ApprovalNotice[] {
  // Steps inside a container too.
  const steps = definition ? everyStep(definition) : [];
  const notifies = (stepId: unknown) => steps.some((s) => asksPeople(s) && s.notify?.length && (stepId === undefined || s.id === stepId));
  const escalates = (stepId: unknown) =>
    steps.some((s) => asksPeople(s) && s.escalate?.notify?.length && (stepId === undefined || s.id === stepId));
  const base = { kind: 'approval' as const, accountId: e.accountId, executionId: e.executionId };
  return events.flatMap((ev): ApprovalNotice[] => {
    const { approvalId, stepId } = ev.data as { approvalId?: unknown; stepId?: unknown };
    if (ev.type === 'approval.requested' && typeof approvalId === 'string' && notifies(stepId))
      return [{ ...base, action: 'send', approvalId }];
    // (An escalation's messages are updated as the others.)
    if (
      (ev.type === 'approval.decided' || ev.type === 'approval.expired') &&
      typeof approvalId === 'string' &&
      (notifies(stepId) || escalates(stepId))
    )
      return [{ ...base, action: 'update', approvalId }];
    // Reminders and escalation (shared/domain/nudges.ts): through the step's `notify`, the escalation's own.
    if (ev.type === 'approval.reminded' && typeof approvalId === 'string' && notifies(stepId))
      return [{ ...base, action: 'remind', approvalId, reminder: Number(ev.data.reminder) }];
    if (ev.type === 'approval.escalated' && typeof approvalId === 'string' && escalates(stepId))
      return [{ ...base, action: 'escalate', approvalId }];
    // A cancelled run's pending approval (`approvalId`: the caller names it) goes with it.
    if (ev.type === 'execution.cancelled' && e.approvalId && (notifies(undefined) || escalates(undefined)))
      return [{ ...base, action: 'update', approvalId: e.approvalId }];
    return [];
  });
}

type RunRef = Pick<Execution, 'accountId' | 'executionId' | 'workflowId' | 'workflowVersion'> & { approvalId?: string };

/**
 * Queue the events that the run's notification targets subscribed to, and the approval notices
 * they mean for steps that `notify` channels. Delivery happens in the notifications worker, with
 * retries; queuing never fails the run (errors are logged).
 */
export const notifyEvents = (e: RunRef, events: readonly RunEvent[]) =>
  queueNotices(e, events, (definition) => approvalNotices(e, definition, events));

/**
 * `notifyEvents` for events that never concern an approval (a run's start): the trigger's bundle
 * then holds no approval-notice code (esbuild drops what no import reaches).
 */
export const notifyTargets = (e: RunRef, events: readonly RunEvent[]) => queueNotices(e, events);

/** A workflow's own events (a schedule's fire, skip or failure; `executionId` may name no run): delivery reads this version's targets. */
export const notifyWorkflowEvents = (e: RunRef, events: readonly RunEvent[]) => queueNotices(e, events, undefined, true);

async function queueNotices(
  e: RunRef,
  events: readonly RunEvent[],
  approvalsOf?: (definition: WorkflowDefinition | undefined) => ApprovalNotice[],
  ofWorkflow = false,
): Promise<void> {
  if (events.length === 0) return;
  const definition = await runDefinition(e);
  const targets = definition?.notifications ?? [];
  const approvals = approvalsOf?.(definition) ?? [];
  if (targets.length === 0 && approvals.length === 0) return;
  const url = config().NOTIFY_QUEUE_URL;
  // Approval notices go in the delivery log's envelope, each with a delivery of its own (shared/notifications/senders.ts).
  const messages: object[] = [
    ...targets.flatMap((t, target) =>
      events
        .filter((ev) => (t.events as readonly string[]).includes(ev.type))
        .map((event) => ({
          accountId: e.accountId,
          executionId: e.executionId,
          target,
          event,
          ...(ofWorkflow && e.workflowVersion !== undefined
            ? { workflow: { workflowId: e.workflowId, workflowVersion: e.workflowVersion } }
            : {}),
        })),
    ),
    ...approvals.map((payload) => ({ kind: 'approval', deliveryId: newId('dl'), payload })),
  ];
  try {
    for (let i = 0; i < messages.length; i += 10) {
      const { Failed = [] } = await queue().send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          // Every message of the batch is the run's account's (approval notices included): its fair-queue group.
          Entries: messages
            .slice(i, i + 10)
            .map((m, j) => ({ Id: String(j), ...tenantGroup(e.accountId), MessageBody: JSON.stringify(m) })),
        }),
      );
      if (Failed.length) logger.error('notifications not queued', { executionId: e.executionId, failed: Failed.map((f) => f.Code) });
    }
  } catch (error) {
    logger.error('notifications not queued', { executionId: e.executionId, error: error as Error });
  }
}
