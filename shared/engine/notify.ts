import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { queue } from '../clients.ts';
import { config } from '../config.ts';
import { type Execution, RunEvent } from '../db/entities/execution.ts';
import { logger } from '../logger.ts';
import { runDefinition } from './versions.ts';

/** A notifications-queue message: deliver `event` to target number `target` of the run's workflow. */
export const NotifyMessage = z.object({
  accountId: z.string(),
  executionId: z.string(),
  target: z.number().int().min(0),
  event: RunEvent,
  /** A workflow's event that no run wrote (a schedule's skip or failure): the targets are this version's. */
  workflow: z.object({ workflowId: z.string(), workflowVersion: z.number() }).optional(),
});
export type NotifyMessage = z.infer<typeof NotifyMessage>;

/**
 * Queue the events that the run's notification targets subscribed to. Delivery happens in the
 * notifications worker, with retries; queuing never fails the run (errors are logged).
 */
export async function notifyEvents(
  e: Pick<Execution, 'accountId' | 'executionId' | 'workflowId' | 'workflowVersion'>,
  events: readonly RunEvent[],
  /** The event is the workflow's, not a run's (`executionId` may name no run): delivery reads this version's targets. */
  ofWorkflow = false,
): Promise<void> {
  if (events.length === 0) return;
  const targets = (await runDefinition(e))?.notifications ?? [];
  if (targets.length === 0) return;
  const url = config().NOTIFY_QUEUE_URL;
  const messages: NotifyMessage[] = targets.flatMap((t, target) =>
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
  );
  try {
    for (let i = 0; i < messages.length; i += 10) {
      const { Failed = [] } = await queue().send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: JSON.stringify(m) })),
        }),
      );
      if (Failed.length) logger.error('notifications not queued', { executionId: e.executionId, failed: Failed.map((f) => f.Code) });
    }
  } catch (error) {
    logger.error('notifications not queued', { executionId: e.executionId, error: error as Error });
  }
}
