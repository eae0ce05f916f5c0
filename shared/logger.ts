import type { LogAttributes } from '@aws-lambda-powertools/logger/types';
import { logFormat, logScope, ServiceLogger, TextLogFormatter } from './log-format.ts';

/**
 * The service's one logger: Powertools' JSON lines (CloudWatch on AWS, tests), or with
 * `LOG_FORMAT=text` (`npm start`'s default) a short line per request and warnings and errors in full.
 * Its level is Powertools' `POWERTOOLS_LOG_LEVEL` (INFO by default). Both are read when it is made.
 */
export const logger = new ServiceLogger({
  serviceName: 'flowgate',
  ...(logFormat(process.env.LOG_FORMAT) === 'text' && { logFormatter: new TextLogFormatter() }),
});

/** Run `fn` in a log scope of its own (one request): what `logKeys` sets within it is on its lines only. */
export const inLogScope = <T>(fn: () => T): T => logScope.run({}, fn);

/** Keys for every later line of the current log scope (outside one: of the logger, for every later line). */
export function logKeys(keys: LogAttributes) {
  const scope = logScope.getStore();
  if (scope) Object.assign(scope, keys);
  else logger.appendKeys(keys);
}

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

/** What stands where a secret's value was. */
export const REDACTED = '[redacted]';

/** A value's part before an unencoded `#`, the part a URL built from it sends, when long enough to be a credential. */
const MIN_PART = 8;

/**
 * The forms a server echoes a value back in: as given, JSON-escaped (as JSON.stringify writes it, with
 * every non-ASCII character as `\uXXXX`, and with every character so), URL-encoded, base64 (standard
 * and URL-safe, padded or not), and the part before an unencoded `#` (a URL sends only that).
 */
function echoedForms(v: string): string[] {
  if (!v) return [];
  const u = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  const json = JSON.stringify(v).slice(1, -1);
  const escaped = [json.replace(/[\u0080-\uffff]/g, u), v.split('').map(u).join('')];
  const b64 = Buffer.from(v).toString('base64');
  const beforeHash = v.split('#')[0] ?? '';
  return [
    v,
    json,
    // Escapes in either case of hex digits (`\u00e9`, `\u00E9`).
    ...escaped.flatMap((e) => [e, e.replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`)]),
    encodeURIComponent(v),
    b64,
    b64.replace(/=+$/, ''),
    Buffer.from(v).toString('base64url'),
    ...(beforeHash !== v && beforeHash.length >= MIN_PART ? [beforeHash] : []),
  ];
}

/**
 * Deep copy with every occurrence of every one of `values` (account secrets a run used) replaced by
 * `[redacted]` in every string and key, in every form of `echoedForms`. Longer forms first, so one
 * that contains another is replaced whole.
 */
export function redactValues<T>(value: T, values: readonly string[]): T {
  const forms = [...new Set(values.flatMap(echoedForms))].sort((a, b) => b.length - a.length);
  if (forms.length === 0) return value;
  // One pass: what was put in for one value is never searched for another.
  const pattern = new RegExp(forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  const text = (s: string) => s.replace(pattern, REDACTED);
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x)]));
    return v;
  };
  return walk(value) as T;
}
