import { ApprovalNotice } from '../engine/notify.ts';
import { logger } from '../logger.ts';
import { jobDeliveryId, planNotice } from './approval-plan.ts';
import { approvalKind, eventDeliveryId, type Memo, processDelivery, type QueueMessage } from './senders.ts';

/** A message to put back on the notifications queue, `delaySeconds` later (one delivery's next attempt), in its account's fair-queue group. */
export type Later = { message: Extract<QueueMessage, { kind: string }>; delaySeconds: number; accountId: string };

/**
 * An approval notice (kind `approval`), in the notifications worker: planned into its messages
 * (./approval-plan.ts), each a delivery of its own with its own attempts, sent here at once, one
 * after the other. A message worth another try comes back as `Later`: the worker queues it alone, so
 * a retry sends only what failed (and an admin can redeliver one message). A copy of the notice
 * plans the same delivery ids: what was delivered is not sent again.
 */
export async function processNotice(payload: unknown, noticeId: string | undefined): Promise<Later[]> {
  const parsed = ApprovalNotice.safeParse(payload);
  if (!parsed.success) {
    logger.error('approval notice dropped: malformed payload');
    return [];
  }
  const notice = parsed.data;
  const later: Later[] = [];
  const memo: Memo = new Map();
  for (const job of await planNotice(notice)) {
    const message = {
      kind: approvalKind(job.purpose),
      deliveryId: jobDeliveryId(noticeId, notice, job.key, (seed, at) => eventDeliveryId(seed, 0, at)),
      payload: job,
    };
    const { retryInSeconds } = await processDelivery(message, Date.now, memo);
    if (retryInSeconds !== undefined) later.push({ message, delaySeconds: retryInSeconds, accountId: notice.accountId });
  }
  return later;
}
