import * as z from 'zod';
import { idOf } from './common.ts';

export const DeliveryParams = z.object({ deliveryId: idOf('DELIVERY_NOT_FOUND', 'Delivery') });

/** One outgoing message of the delivery log (shared/db/entities/delivery.ts), as the API shows it: no secret, token or signature. */
export const DeliveryView = z.object({
  deliveryId: z.string(),
  executionId: z.string(),
  approvalId: z.string().nullable(),
  /**
   * What it is: `event` (a signed event notification), or one message of an approval to a reviewer or
   * conversation: `approval-request`, `approval-reminder`, `approval-escalation`, `approval-update`
   * (a vote changed what it shows), `approval-outcome` (decided, expired or cancelled).
   */
  kind: z.string(),
  /** `webhook`, `email`, `slack` or `teams`. */
  channel: z.string(),
  /** Where it goes: a receiver's scheme and host (its path and query may hold a secret), a recipient. */
  target: z.string(),
  /** SKIPPED: not sent on purpose (a reminder of an approval decided before its turn); its last attempt's `error` says why. */
  state: z.enum(['PENDING', 'DELIVERED', 'FAILED', 'SKIPPED']),
  attempts: z.array(
    z.object({
      at: z.number(),
      status: z.number().int().optional(),
      error: z.string().optional(),
      durationMs: z.number(),
    }),
  ),
  /** When the next attempt is due (PENDING), else null. */
  nextRetryAt: z.number().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export const DeliveryList = z.object({ items: z.array(DeliveryView), nextCursor: z.string().nullable() });
