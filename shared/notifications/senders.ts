import { createHash } from 'node:crypto';
import { encodeTime } from 'ulid';
import * as z from 'zod';
import { getDelivery, recordAttempt } from '../db/entities/delivery.ts';
import { MAX_ATTEMPTS, retryDelaySeconds, safeError } from '../domain/delivery-policy.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import type { SendResult } from '../channels/types.ts';
import { EventNotice } from '../engine/notify.ts';
import { sendApprovalJob } from './approval-messages.ts';
import { ApprovalJob, jobTarget, PURPOSES } from './approval-plan.ts';
import { sendEvent } from './deliver.ts';

/**
 * The senders of the notifications queue, one per kind of outgoing message, and the one loop that
 * sends and logs them all (the delivery log, shared/db/entities/delivery.ts). A sender names its
 * delivery (id, run, approval, channel, target as it may be shown) and sends once per attempt; the
 * loop records the attempt, decides the retry (delivery-policy.ts) and counts it. Adding a kind: a
 * sender here (its payload's schema, `identify`, `send`), and messages `{ kind, deliveryId?, payload }`
 * on the notifications queue. Everything here runs in the notifications worker, never on a run's path.
 */

/** What a delivery is, from its message alone (no reads). */
export type DeliveryIdentity = {
  deliveryId: string;
  accountId: string;
  executionId: string;
  approvalId?: string;
  channel: string;
  target: string;
  /** Extra fields for the worker's log lines (never secrets). */
  log?: Record<string, unknown>;
};

/** Reads shared by the messages of one notice, by key. */
export type Memo = Map<string, Promise<unknown>>;

export type Sender<M> = {
  schema: z.ZodType<M>;
  /** `deliveryId` is the message's own when it has one (approval messages, redeliveries). */
  identify(payload: M, deliveryId: string | undefined): DeliveryIdentity;
  /**
   * `redelivery`: sent again on purpose (an admin asked), even what was sent already. `memo`: reads
   * shared by the messages of one notice (the approval, the opened channel), each made once.
   */
  send(payload: M, ctx: { deliveryId: string; attempt: number; redelivery: boolean; memo?: Memo }): Promise<SendResult>;
};

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/**
 * An event notification's delivery id, the same for every copy of its message: the event's time (so
 * ids sort by it) and a digest of the event and target. `dl_` + 26 characters, like every id.
 */
export function eventDeliveryId(eventId: string, target: number, at: number): string {
  const digest = createHash('sha256').update(`${eventId}\u0000${target}`).digest();
  const tail = Array.from(digest.subarray(0, 16), (b) => ALPHABET[b % 36]).join('');
  return `dl_${encodeTime(Math.max(0, Math.min(at, 2 ** 48 - 1)), 10).toLowerCase()}${tail}`;
}

/** The run's signed event notifications (./deliver.ts). */
const event: Sender<EventNotice> = {
  schema: EventNotice,
  identify: (m, deliveryId) => ({
    deliveryId: deliveryId ?? eventDeliveryId(m.event.eventId, m.target, m.event.at),
    accountId: m.accountId,
    executionId: m.executionId,
    ...(typeof m.event.data.approvalId === 'string' ? { approvalId: m.event.data.approvalId } : {}),
    channel: 'webhook',
    target: `notification target ${m.target}`,
    log: { eventId: m.event.eventId, type: m.event.type },
  }),
  send: (m) => sendEvent(m),
};

/**
 * One message of an approval (./approval-plan.ts plans a notice into them, ./notices.ts sends
 * them): a request, reminder, escalation, update or outcome, to one reviewer or conversation on one
 * channel. Its delivery id comes with the message.
 */
const approvalMessage: Sender<ApprovalJob> = {
  schema: ApprovalJob,
  identify: (j, deliveryId) => ({
    deliveryId: deliveryId ?? eventDeliveryId(`${j.approvalId}#${j.purpose}#${j.key}`, 0, Date.now()),
    accountId: j.accountId,
    executionId: j.executionId,
    approvalId: j.approvalId,
    channel: j.channelType,
    target: jobTarget(j),
    log: { approvalId: j.approvalId, purpose: j.purpose, channel: j.channelName },
  }),
  send: (j, { redelivery, memo }) => sendApprovalJob(j, { redelivery, memo }),
};

/** The delivery kind of an approval message for `purpose`. */
export const approvalKind = (purpose: ApprovalJob['purpose']) => `approval-${purpose}`;

/** Each sender checks its own payload with its schema. */
export const SENDERS: Record<string, Sender<any>> = {
  event,
  ...Object.fromEntries(PURPOSES.map((p) => [approvalKind(p), approvalMessage])),
};

/**
 * A notifications-queue message: a kind's payload (`redelivery` when an admin asked for it again), an
 * approval notice (kind `approval`: planned into its messages, ./notices.ts), or (as queued by the
 * runs) a bare event notification.
 */
export const QueueMessage = z.union([
  z.object({
    kind: z.string().min(1).max(64),
    deliveryId: z.string().max(64).optional(),
    payload: z.unknown(),
    redelivery: z.literal(true).optional(),
  }),
  EventNotice.transform((payload) => ({ kind: 'event', deliveryId: undefined, payload, redelivery: undefined })),
]);
export type QueueMessage = z.infer<typeof QueueMessage>;

/**
 * Send one message and log the attempt. Answers when to try again (seconds) while the delivery has
 * attempts left; the caller puts the message back that much later. A message of a delivery already
 * finished (a duplicate from the queue) is dropped unsent: a redelivery first sets it
 * PENDING again. Throws only when the attempt could not be recorded (the queue retries it).
 */
export async function processDelivery(m: QueueMessage, now = Date.now, memo?: Memo): Promise<{ retryInSeconds?: number }> {
  const sender = SENDERS[m.kind];
  const parsed = sender?.schema.safeParse(m.payload);
  if (!sender || !parsed?.success) {
    logger.error('notification dropped: unknown kind or malformed payload', { kind: m.kind });
    return {};
  }
  const id = sender.identify(parsed.data, m.deliveryId);
  const existing = await getDelivery(id.accountId, id.deliveryId);
  if (existing && existing.state !== 'PENDING') {
    logger.info('notification already delivered or failed; duplicate message dropped', { deliveryId: id.deliveryId, ...id.log });
    return {};
  }
  // A copy that came before its time (a queue delay is at most 15 minutes; a notice planned twice): wait for it.
  const due = existing?.nextRetryAt === undefined ? 0 : existing.nextRetryAt - now();
  if (due > 1000) return { retryInSeconds: Math.ceil(due / 1000) };
  const tries = (existing?.tries ?? 0) + 1;
  const started = now();
  let result: SendResult;
  try {
    result = await sender.send(parsed.data, {
      deliveryId: id.deliveryId,
      attempt: tries,
      redelivery: m.redelivery === true,
      ...(memo ? { memo } : {}),
    });
  } catch (e) {
    result = { ok: false, error: (e as Error).message };
  }
  const finished = now();
  const retry = !result.ok && !result.final && !result.skipped && tries < MAX_ATTEMPTS;
  const delay = retry ? retryDelaySeconds(tries, result.retryAfterSeconds) : undefined;
  const error = result.ok ? undefined : safeError(result.error ?? 'failed');
  // The provider's id of what was sent: a Slack `ts`, an SES message id.
  const ref = result.ref?.ts ?? result.ref?.messageId;
  const recorded = await recordAttempt(
    {
      deliveryId: id.deliveryId,
      accountId: id.accountId,
      executionId: id.executionId,
      approvalId: id.approvalId,
      kind: m.kind,
      channel: id.channel,
      target: result.target ?? existing?.target ?? id.target,
      message: m.payload,
      attempt: {
        at: started,
        ...(result.status !== undefined ? { status: result.status } : {}),
        ...(error !== undefined ? { error } : {}),
        durationMs: finished - started,
      },
      tries,
      state: result.ok ? 'DELIVERED' : result.skipped ? 'SKIPPED' : retry ? 'PENDING' : 'FAILED',
      ...(delay !== undefined ? { nextRetryAt: finished + delay * 1000 } : {}),
      ...(ref !== undefined ? { ref } : {}),
    },
    finished,
  );
  if (!recorded) logger.warn('notification attempt not recorded: the delivery finished meanwhile', { deliveryId: id.deliveryId });
  if (result.ok) {
    emit('NotificationDelivered');
    return {};
  }
  if (result.skipped) {
    logger.info('notification skipped', { deliveryId: id.deliveryId, reason: error, ...id.log });
    return {};
  }
  emit('NotificationFailed');
  if (delay !== undefined) {
    logger.warn('notification delivery failed; will retry', {
      deliveryId: id.deliveryId,
      kind: m.kind,
      tries,
      inSeconds: delay,
      error,
      ...id.log,
    });
    return { retryInSeconds: delay };
  }
  emit('DeliveryFailed');
  logger.error('notification delivery failed for good', { deliveryId: id.deliveryId, kind: m.kind, tries, error, ...id.log });
  return {};
}
