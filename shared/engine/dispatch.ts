import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, type QueueAttributeName, SendMessageCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { queue } from '../clients.ts';
import { config } from '../config.ts';

/**
 * The runs lanes: the main runs queue (no lane) and the heavy lane, a queue of its own with its own
 * worker concurrency, for the new runs of heavy accounts (./lanes.ts).
 */
export const Lane = z.literal('heavy');
export type Lane = z.infer<typeof Lane>;

/**
 * The body of a runs-queue message: "run this execution, if `dispatch` is still the one it waits for".
 * `sentAt` (ms) is when the dispatch was first sent: a message can overtake its run's first write.
 * `lane`: the lane it was sent to, which the worker's own re-sends of the run keep.
 */
export const RunMessage = z.object({
  accountId: z.string(),
  executionId: z.string(),
  dispatch: z.string(),
  sentAt: z.number().optional(),
  lane: Lane.optional(),
});
export type RunMessage = z.infer<typeof RunMessage>;

export const newDispatch = () => randomUUID();

/** SQS delays are at most 15 minutes; longer waits are made of several hops. */
export const MAX_DELAY_SECONDS = 900;

/**
 * The message group of an account's messages on the runs and notifications queues (standard queues):
 * with a group on each message they are SQS fair queues, the account being the tenant. While one
 * account holds a disproportionate share of the messages in flight, SQS hands out the other accounts'
 * messages first, so a noisy account's backlog does not raise their dwell time (docs/architecture.md
 * "Fair tenants"). No queue setting is needed; a group on a standard queue does not order its messages.
 */
export const tenantGroup = (accountId: string) => ({ MessageGroupId: accountId });

/** The delay (seconds) of the message of a run asleep until `wakeAt` (none when awake). */
export const delayUntil = (wakeAt: number | undefined, now: number) => (wakeAt ? (wakeAt - now) / 1000 : 0);

/** The queue of a lane: the heavy lane's when it has one (HEAVY_RUNS_QUEUE_URL), the runs queue otherwise. */
export const runsQueueUrl = (lane?: Lane) => (lane === 'heavy' && config().HEAVY_RUNS_QUEUE_URL) || config().RUNS_QUEUE_URL;

/** Send a run's message, to the queue of its lane (`m.lane`; none: the runs queue; an absent lane is left out of the body). */
export async function sendRunMessage(m: RunMessage, delaySeconds = 0): Promise<void> {
  await queue().send(
    new SendMessageCommand({
      QueueUrl: runsQueueUrl(m.lane),
      ...tenantGroup(m.accountId),
      MessageBody: JSON.stringify({ ...m, sentAt: m.sentAt ?? Date.now() }),
      DelaySeconds: Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(delaySeconds))),
    }),
  );
}

/** What SQS counts on a queue: messages ready, in flight (received, not deleted) and delayed. */
const BACKLOG_ATTRIBUTES: QueueAttributeName[] = [
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
];

/**
 * The runs queues' messages as SQS counts them, both lanes: ready, in flight and delayed together
 * (approximate: the counts trail the queue by about a minute). The startup sweep's `queue:backlog` grant.
 */
export async function runsQueueBacklog(): Promise<number> {
  const { RUNS_QUEUE_URL, HEAVY_RUNS_QUEUE_URL } = config();
  const counts = await Promise.all(
    [RUNS_QUEUE_URL, ...(HEAVY_RUNS_QUEUE_URL ? [HEAVY_RUNS_QUEUE_URL] : [])].map(async (QueueUrl) => {
      const { Attributes = {} } = await queue().send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: BACKLOG_ATTRIBUTES }));
      return BACKLOG_ATTRIBUTES.reduce((sum, name) => sum + (Number(Attributes[name]) || 0), 0);
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}
