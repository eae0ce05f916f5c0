import { config } from '../config.ts';

/**
 * The delivery log (shared/db/entities/delivery.ts): every outgoing message with its attempts. The
 * notifications worker sends and records (shared/notifications/senders.ts); this module is what the API
 * reads and the redelivery.
 *
 * Retries: 5 attempts over about an hour, after 1, 4, 15 and 40 minutes (DELIVERY_RETRY_SECONDS is
 * the minute), or after the receiver's `Retry-After` when it answers 429 or 503 with one (at most
 * 12 hours, SQS's longest delay). Then the delivery is FAILED; a redelivery starts the schedule again.
 * A worker that fails without recording (DynamoDB unreachable) leaves the message to the queue's
 * redrive, and after its receives to the notifications DLQ, which has an alarm.
 */
export const MAX_ATTEMPTS = 5;
const SCHEDULE = [1, 4, 15, 40] as const;
const MAX_DELAY_SECONDS = 12 * 3600;

/** Seconds before the attempt after attempt number `tries` (1-based); `retryAfter` (the receiver's) wins. */
export function retryDelaySeconds(tries: number, retryAfter?: number): number {
  if (retryAfter !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
    return Math.min(MAX_DELAY_SECONDS, Math.max(1, Math.ceil(retryAfter)));
  const unit = config().DELIVERY_RETRY_SECONDS;
  return Math.min(MAX_DELAY_SECONDS, Math.ceil(unit * (SCHEDULE[Math.min(Math.max(tries, 1), SCHEDULE.length) - 1] as number)));
}

/**
 * A receiver URL as the log shows it: scheme and host only. Paths and queries often carry the
 * receiver's secret (Slack and Teams webhook URLs, `?token=`), and credentials never belong there.
 */
export function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname !== '/' || u.search ? '/…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

/** An error text as the log keeps it: URLs cut to their host (safeTarget), at most 300 characters. */
export const safeError = (text: string) => {
  const cut = text.replace(/\bhttps?:\/\/[^\s"'<>]+/gi, (u) => safeTarget(u));
  return cut.length > 300 ? `${cut.slice(0, 300)}…` : cut;
};
