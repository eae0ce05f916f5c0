import { createHash } from 'node:crypto';
import { encodeTime } from 'ulid';
import * as z from 'zod';
import { getDelivery, recordAttempt } from '../db/entities/delivery.ts';
import { MAX_ATTEMPTS, retryDelaySeconds, safeError } from '../domain/delivery-policy.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import type { SendResult } from '../channels/types.ts';
import { ApprovalNotice, EventNotice } from '../engine/notify.ts';
import { DeliveryRetry, deliverApprovalNotice } from './approval-messages.ts';
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

export type Sender<M> = {
  schema: z.ZodType<M>;
  /** `deliveryId` is the message's own when it has one (approval messages, redeliveries). */
  identify(payload: M, deliveryId: string | undefined): DeliveryIdentity;
  send(payload: M, ctx: { deliveryId: string; attempt: number }): Promise<SendResult>;
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
 * An approval's messages on the channels its step names (./approval-messages.ts): one
 * notice sends, reminds, escalates or updates all of them, each recipient's message once (a retry
 * sends only those not yet sent; the v1 approval detail lists every message). Its delivery id comes
 * with the message (`notifyEvents` gives each notice its own).
 */
const approval: Sender<ApprovalNotice> = {
  schema: ApprovalNotice,
  identify: (m, deliveryId) => ({
    deliveryId: deliveryId ?? eventDeliveryId(`${m.approvalId}#${m.action}#${m.reminder ?? 0}`, 0, Date.now()),
    accountId: m.accountId,
    executionId: m.executionId,
    approvalId: m.approvalId,
    channel: 'approval',
    target: `${m.action === 'remind' ? `reminder ${m.reminder ?? ''}`.trim() : m.action} of the approval's messages`,
    log: { approvalId: m.approvalId, action: m.action },
  }),
  send: async (m) => {
    try {
      await deliverApprovalNotice(m);
      return { ok: true };
    } catch (e) {
      if (!(e instanceof DeliveryRetry)) throw e;
      return { ok: false, error: e.message, ...(e.retryAfterSeconds ? { retryAfterSeconds: e.retryAfterSeconds } : {}) };
    }
  },
};

/** Each sender checks its own payload with its schema. */
export const SENDERS: Record<string, Sender<any>> = { event, approval };

/** A notifications-queue message: a kind's payload, or (as queued by the runs) a bare event notification. */
export const QueueMessage = z.union([
  z.object({ kind: z.string().min(1).max(64), deliveryId: z.string().max(64).optional(), payload: z.unknown() }),
  EventNotice.transform((payload) => ({ kind: 'event', deliveryId: undefined, payload })),
]);
export type QueueMessage = z.infer<typeof QueueMessage>;

/**
 * Send one message and log the attempt. Answers when to try again (seconds) while the delivery has
 * attempts left; the caller puts the message back that much later. A message of a delivery already
 * DELIVERED or FAILED (a duplicate from the queue) is dropped unsent: a redelivery first sets it
 * PENDING again. Throws only when the attempt could not be recorded (the queue retries it).
 */
export async function processDelivery(m: QueueMessage, now = Date.now): Promise<{ retryInSeconds?: number }> {
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
  const tries = (existing?.tries ?? 0) + 1;
  const started = now();
  let result: SendResult;
  try {
    result = await sender.send(parsed.data, { deliveryId: id.deliveryId, attempt: tries });
  } catch (e) {
    result = { ok: false, error: (e as Error).message };
  }
  const finished = now();
  const retry = !result.ok && !result.final && tries < MAX_ATTEMPTS;
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
      state: result.ok ? 'DELIVERED' : retry ? 'PENDING' : 'FAILED',
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
