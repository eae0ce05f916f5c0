import { encodeTime } from 'ulid';
import { INBOUND_BODY_BYTES, type RefusedRequest, writeRefusals } from '../db/entities/inbound-request.ts';
import { logger } from '../logger.ts';
import { keepIdentity } from '../sdk-plugins.ts';
import { withheld } from './trigger-context.ts';

// Recording a webhook's refused requests (docs/webhooks.md "Why was my request refused?"). Off the
// accepted path entirely: only a refused request records, and only a refused request's invocation
// writes. Each function instance keeps, per webhook, the newest refusals (at most REFUSALS_PER_FLUSH
// and REFUSAL_BYTES_PER_FLUSH of headers and body, the newest always) and a count of all of them by code,
// and writes them at the end of a refused invocation that finds its last write a second old or more: a
// flood of refusals costs each instance at most two writes a second per webhook (the log's head, then
// one BatchWrite of its slots), and at most about 35 write units, whatever its rate and bodies (the heat
// bench's flood, docs/performance.md). What an instance holds when Lambda retires it is lost, like the
// counts of `shared/db/counters.ts`.

/** Refusals an instance writes per webhook and flush, the newest; the others are counted only. */
export const REFUSALS_PER_FLUSH = 10;
/**
 * Bytes of headers and bodies an instance writes per webhook and flush: the newest refusals that fit, and
 * the newest always (a slot holds at most 16 KiB of body and the headers, under 10 KB at the edge).
 */
export const REFUSAL_BYTES_PER_FLUSH = 32 * 1024;
/** Headers kept of a refused request, and the characters of each value. */
const MAX_HEADERS = 50;
const MAX_HEADER_CHARS = 1024;
const FLUSH_INTERVAL_MS = 1000;

type Kept = RefusedRequest & { ulidTime: string; bytes: number };
type Pending = {
  requests: Kept[];
  counts: Map<string, number>;
  within: <R>(fn: () => R) => R;
};
const pending = new Map<string, Pending>();
let lastFlush = 0;

/** What a masked value shows of a credential: an API key's id (`dyk_<id>_…`), a Stripe signature's `t=`; nothing else. */
function masked(name: string, value: string): string {
  const key = /^(Bearer\s+)?(dyk_[0-9a-z]{26}_)/i.exec(value.trim());
  if (key) return `${key[1] ?? ''}${key[2]}***`;
  if (name === 'stripe-signature') return value.replace(/\b(v\d+|s\d+)=[^,]*/g, '$1=***');
  return '***';
}

/** The headers as recorded: names in lower case, credentials, signatures and cookies masked, at most MAX_HEADERS. */
export function maskHeaders(headers: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, MAX_HEADERS)) {
    if (value === undefined) continue;
    const n = name.toLowerCase().slice(0, 128);
    kept[n] = withheld(n) ? masked(n, value) : value.slice(0, MAX_HEADER_CHARS);
  }
  return kept;
}

/** The first INBOUND_BODY_BYTES of a body as text (cut at a character's boundary), and whether it was cut. */
export function keptBody(raw: Buffer): { body: string; bodyTruncated: boolean } {
  if (raw.length <= INBOUND_BODY_BYTES) return { body: raw.toString('utf8'), bodyTruncated: false };
  return { body: new TextDecoder().decode(raw.subarray(0, INBOUND_BODY_BYTES), { stream: true }), bodyTruncated: true };
}

export type Refusal = {
  webhookId: string;
  accountId: string;
  at: number;
  ip: string;
  method: string;
  status: number;
  code: string;
  headers: Record<string, string | undefined>;
  body: Buffer;
  authenticated: boolean;
};

/** Keep one refused request for this instance's next write, and write when one is due. */
export async function recordRefusal(r: Refusal): Promise<void> {
  const p = pending.get(r.webhookId) ?? { requests: [], counts: new Map<string, number>(), within: keepIdentity() };
  p.counts.set(r.code, (p.counts.get(r.code) ?? 0) + 1);
  const { body, bodyTruncated } = keptBody(r.body);
  const headers = maskHeaders(r.headers);
  const bytes = Buffer.byteLength(body) + Object.entries(headers).reduce((n, [k, v]) => n + k.length + Buffer.byteLength(v), 0);
  p.requests.push({
    webhookId: r.webhookId,
    accountId: r.accountId,
    at: r.at,
    ip: r.ip,
    method: r.method,
    status: r.status,
    code: r.code,
    headers,
    body,
    bodyTruncated,
    authenticated: r.authenticated,
    ulidTime: encodeTime(r.at, 10).toLowerCase(),
    bytes,
  });
  const size = () => p.requests.reduce((n, q) => n + q.bytes, 0);
  while (p.requests.length > REFUSALS_PER_FLUSH || (p.requests.length > 1 && size() > REFUSAL_BYTES_PER_FLUSH)) p.requests.shift();
  pending.set(r.webhookId, p);
  if (r.at - lastFlush >= FLUSH_INTERVAL_MS) await flushRefusals(r.at);
}

/** Write every webhook's kept refusals now (one head update and one BatchWrite each, all at once). A failed write is logged and dropped. */
export async function flushRefusals(now = Date.now()): Promise<void> {
  lastFlush = now;
  const taken = [...pending];
  pending.clear();
  await Promise.all(
    taken.map(async ([webhookId, p]) => {
      try {
        const requests = p.requests.map(({ bytes: _, ...q }) => q);
        await p.within(() => writeRefusals(webhookId, requests, p.counts));
      } catch (error) {
        logger.warn('refused requests not recorded', { webhookId, error: error as Error });
      }
    }),
  );
}
