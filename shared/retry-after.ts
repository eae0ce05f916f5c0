/**
 * Seconds an HTTP `Retry-After` value asks for: delta-seconds, or an HTTP date (seconds from `now`,
 * never negative). Anything else, or no value, is `undefined`. The one parser for step retries,
 * event deliveries and channel adapters.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d{1,10}$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
