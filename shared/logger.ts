import { Logger } from '@aws-lambda-powertools/logger';

/** The service's one logger (JSON lines; CloudWatch in AWS, stdout locally). */
export const logger = new Logger({ serviceName: 'flowgate' });

const SENSITIVE = /^(authorization|x-api-key|api_key|apikey|password|token|secret|secretkey|x-webhook-signature|cookie)$/i;

/** Replace the values of sensitive query parameters in a raw query string. */
export const redactQuery = (query: string) =>
  query.replace(/(^|&)([^&=]*)=[^&]*/g, (m, amp: string, k: string) => {
    let name = k;
    try {
      name = decodeURIComponent(k.replace(/\+/g, ' '));
    } catch {
      // keep the raw name
    }
    return /^(api_key|token|password|secret)$/i.test(name) ? `${amp}${k}=[redacted]` : m;
  });

/** Deep copy with the values of sensitive fields replaced, for anything that is logged. */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8) return '[truncated]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SENSITIVE.test(k) ? '[redacted]' : redact(v, depth + 1)]));
}
