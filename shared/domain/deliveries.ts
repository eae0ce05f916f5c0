import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { audited, type Auditor } from '../db/audited.ts';
import { queue } from '../clients.ts';
import { config } from '../config.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { type Delivery, getDelivery, listApprovalDeliveries, listExecutionDeliveries, requeueDelivery } from '../db/entities/delivery.ts';
import { conflict, notFound } from '../errors.ts';
import { tenantGroup } from '../engine/dispatch.ts';
import { logger } from '../logger.ts';
import { assertReviewer, requireApproval } from './approvals.ts';
import { requireExecution } from './executions.ts';
import type { Principal } from './principal.ts';

// The delivery log as the API reads it, and redelivery; the worker's side is shared/notifications/senders.ts,
// the retry schedule and what the log may show shared/domain/delivery-policy.ts.

export const deliveryView = (d: Delivery) => ({
  deliveryId: d.deliveryId,
  executionId: d.executionId,
  approvalId: d.approvalId ?? null,
  kind: d.kind,
  channel: d.channel,
  target: d.target,
  state: d.state,
  attempts: d.attempts,
  nextRetryAt: d.nextRetryAt ?? null,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

/** v1: a run's deliveries (the caller's account; another account's run is 404). */
export async function pageExecutionDeliveries(accountId: string, executionId: string, limit: number, cursor: string | undefined) {
  await requireExecution(accountId, executionId);
  const binding = `deliveries:${accountId}:${executionId}`;
  const page = await listExecutionDeliveries(accountId, executionId, limit, decodeCursor(cursor, binding));
  return { items: page.items.map(deliveryView), nextCursor: encodeCursor(page.lastKey, binding) };
}

/** v1: an approval's deliveries, for its reviewers (as the approval's detail). */
export async function pageApprovalDeliveries(
  p: Extract<Principal, { kind: 'apiKey' }>,
  approvalId: string,
  limit: number,
  cursor: string | undefined,
) {
  const a = await requireApproval(p.accountId, approvalId);
  await assertReviewer(p, a);
  const binding = `deliveries:${p.accountId}:ap:${approvalId}`;
  const page = await listApprovalDeliveries(p.accountId, approvalId, limit, decodeCursor(cursor, binding));
  return { items: page.items.map(deliveryView), nextCursor: encodeCursor(page.lastKey, binding) };
}

/**
 * Console (admins): send a delivery again, on purpose, as a new attempt with a fresh retry schedule,
 * whatever its state was (DELIVERED, FAILED or SKIPPED); 409 `DELIVERY_IN_PROGRESS` while it is PENDING. One
 * approval message is sent again alone (a new message, which then is the one kept up to date).
 * `who`: the admin who asked (its `via` goes to the audit log).
 */
export async function redeliver(accountId: string, deliveryId: string, now: number, who: Auditor) {
  const d = await getDelivery(accountId, deliveryId);
  if (!d) throw notFound('DELIVERY_NOT_FOUND', `Delivery ${deliveryId} does not exist.`);
  const busy = () =>
    conflict(
      'DELIVERY_IN_PROGRESS',
      `Delivery ${deliveryId} is being delivered; redeliver it once it has finished (DELIVERED, FAILED or SKIPPED).`,
    );
  const entry = audited(who, 'delivery.redelivered', { type: 'delivery', id: deliveryId }, { kind: d.kind, from: d.state }, now);
  if (d.state === 'PENDING' || !(await requeueDelivery(d, now, false, [entry]))) throw busy();
  try {
    await queue().send(
      new SendMessageCommand({
        QueueUrl: config().NOTIFY_QUEUE_URL,
        ...tenantGroup(accountId),
        MessageBody: JSON.stringify({ kind: d.kind, deliveryId: d.deliveryId, payload: d.message, redelivery: true }),
      }),
    );
  } catch (e) {
    await requeueDelivery(d, now, true).catch((undo: unknown) =>
      logger.error('redelivery not undone', { deliveryId, error: undo as Error }),
    );
    throw e;
  }
  logger.info('redelivery queued', { deliveryId, kind: d.kind });
  return deliveryView({ ...d, state: 'PENDING', tries: 0, nextRetryAt: now, updatedAt: now });
}
