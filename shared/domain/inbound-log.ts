import { decodeTime } from 'ulid';
import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { type Execution, listedExecutionId } from '../db/entities/execution.ts';
import { positionAfter, runWindow, type WindowEntry } from '../db/entities/execution-rows.ts';
import {
  getRefusal,
  INBOUND_BODY_BYTES,
  INBOUND_LOG_SIZE,
  type InboundRequest,
  readInboundHead,
  readRefusals,
  requestRuns,
} from '../db/entities/inbound-request.ts';
import type { Webhook } from '../db/entities/webhook.ts';
import { notFound } from '../errors.ts';
import type { ShardPosition } from '../db/shards.ts';
import { flushRefusals } from './inbound-record.ts';
import type { Principal } from './principal.ts';
import { visibleWebhook } from './webhooks.ts';

// Reading a webhook's inbound log (docs/webhooks.md "Why was my request refused?"): its refused requests
// (the ring of shared/db/entities/inbound-request.ts) and its accepted ones, which are its runs (the
// workflow's run listing, the runs of this webhook kept), merged newest first.

/** Refusals a person can fix and then replay: the request passed the webhook's credential check. */
export const REPLAYABLE_CODES = ['IP_NOT_ALLOWED', 'WEBHOOK_DISABLED', 'RATE_LIMITED'] as const;

/** Runs read per page from the workflow's listing, to find this webhook's among the workflow's others. */
const RUN_WINDOW = 100;

const isJsonObject = (text: string) => {
  if (text.trim() === '') return true;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
};

export const refusalView = (r: InboundRequest) => ({
  requestId: r.requestId,
  at: r.at,
  ip: r.ip,
  method: r.method,
  status: r.status,
  code: r.code,
  headers: r.headers,
  body: r.body,
  bodyTruncated: r.bodyTruncated,
  replayable: r.authenticated && !r.bodyTruncated && (REPLAYABLE_CODES as readonly string[]).includes(r.code) && isJsonObject(r.body),
});

/** The payload an accepted request's run keeps: inline, or (large) in the artifacts bucket; `bytes` caps what is read. */
export async function runPayload(e: Execution, bytes?: number): Promise<string> {
  if (!e.payloadRef) return JSON.stringify(e.payload ?? {});
  const { GetObjectCommand } = await import('../s3.ts');
  const res = await (await storage()).send(
    new GetObjectCommand({ Bucket: config().ARTIFACTS_BUCKET, Key: e.payloadRef, ...(bytes ? { Range: `bytes=0-${bytes - 1}` } : {}) }),
  );
  return (await res.Body?.transformToString('utf8')) ?? '';
}

/** An accepted request, as its run keeps it: no code, the run's id, the headers kept for `$trigger` (else none). */
export async function acceptedView(e: Execution) {
  const text = await runPayload(e, INBOUND_BODY_BYTES + 1);
  const cut = Buffer.byteLength(text) > INBOUND_BODY_BYTES || e.payloadRef !== undefined;
  return {
    requestId: e.executionId,
    at: e.startedAt,
    ip: e.sourceIp ?? null,
    method: 'POST',
    status: 200,
    code: null,
    executionId: e.executionId,
    headers: e.triggerContext?.headers ?? {},
    body: cut ? new TextDecoder().decode(Buffer.from(text).subarray(0, INBOUND_BODY_BYTES), { stream: true }) : text,
    bodyTruncated: cut,
    replayable: true,
  };
}

/** A run of the log: one this webhook's trigger started (a replay is no request the webhook received). */
export const isRequestRun = (w: Webhook, e: Pick<Execution, 'webhookId' | 'trigger' | 'replayOf'> | undefined) =>
  e !== undefined && e.webhookId === w.webhookId && e.trigger === 'webhook' && e.replayOf === undefined;

/** Where a page of the log starts: the refusals' seqs below `r` (0: no more), the runs' listing at `w` (`wd`: no more). */
type Position = { r: number; w: ShardPosition | null; wd: boolean };

const entryTime = (e: WindowEntry) => e.row?.startedAt ?? decodeTime(listedExecutionId(e.sk).slice('ex_'.length).toUpperCase());

/**
 * One page of the log, newest first: `limit` requests and the cursor after them (null: none). Calls:
 * the head (GetItem), the refusals of the page (one BatchGet of at most `limit` slots), a window of the
 * workflow's runs (LIST_SHARDS Queries and one BatchGet of their rows), the page's runs (one BatchGet).
 * A page may be short when the workflow's other runs fill the window; its cursor goes on.
 */
export async function pageInbound(w: Webhook, userId: string, limit: number, cursor: string | undefined, now = Date.now()) {
  const binding = `inbound:${w.accountId}:${w.webhookId}:${userId}`;
  const start = decodeCursor(cursor, binding) as Position | undefined;
  // This instance's refusals not written yet first (none on AWS, where the route is a function of its own;
  // locally one process runs every function, as the stats route does with its counts).
  await flushRefusals(now);
  const head = await readInboundHead(w.webhookId);
  const floor = Math.max(1, head.seq - INBOUND_LOG_SIZE + 1);
  const top = start ? Math.min(start.r, head.seq + 1) : head.seq + 1;
  const seqs: number[] = [];
  for (let s = top - 1; s >= floor && seqs.length < limit; s--) seqs.push(s);
  const refusalsMore = seqs.length > 0 && (seqs.at(-1) as number) > floor;
  const runsDone = start?.wd === true;
  const [refusals, window] = await Promise.all([
    readRefusals(w.webhookId, seqs, now),
    runsDone ? undefined : runWindow(w.accountId, { workflowId: w.workflowId }, RUN_WINDOW, start?.w ?? undefined),
  ]);
  const entries = window?.entries ?? [];
  const runsMore = window?.next !== undefined;
  const taken: ({ refusal: InboundRequest } | { executionId: string })[] = [];
  let i = 0;
  let j = 0;
  while (taken.length < limit) {
    const r = refusals[i];
    const e = entries[j];
    if ((!r && refusalsMore) || (!e && runsMore) || (!r && !e)) break;
    if (e && (!r || entryTime(e) >= r.at)) {
      j++;
      if (isRequestRun(w, e.row)) taken.push({ executionId: listedExecutionId(e.sk) });
    } else if (r) {
      i++;
      taken.push({ refusal: r });
    }
  }
  const runs = new Map(
    (
      await requestRuns(
        w.accountId,
        taken.flatMap((t) => ('executionId' in t ? [t.executionId] : [])),
      )
    ).map((e) => [e.executionId, e]),
  );
  const items = (
    await Promise.all(
      taken.map((t) =>
        'refusal' in t ? refusalView(t.refusal) : runs.has(t.executionId) ? acceptedView(runs.get(t.executionId) as Execution) : undefined,
      ),
    )
  ).filter((v) => v !== undefined);
  const r = i < refusals.length ? (refusals[i - 1]?.seq ?? top) : refusalsMore ? (seqs.at(-1) as number) : 0;
  const wAt =
    j === 0
      ? (start?.w ?? null)
      : j < entries.length
        ? positionAfter(window?.start, window?.shards ?? 0, entries, j - 1)
        : (window?.next ?? null);
  const next: Position = { r, w: wAt, wd: runsDone || (j === entries.length && !runsMore) };
  const done = next.r === 0 && next.wd;
  return { items, nextCursor: done ? null : encodeCursor(next, binding), refused: head.refused };
}

/** The shape of a request's id: a refusal's (`rq_…`) or a run's (`ex_…`). */
const REQUEST_ID = /^(rq|ex)_[0-9A-Za-z]{1,40}$/;

/** One request of the log by id: a refusal it still holds, or a run this webhook's trigger started; else 404. */
export async function findInbound(
  w: Webhook,
  requestId: string,
  now = Date.now(),
): Promise<{ kind: 'refused'; refusal: InboundRequest } | { kind: 'accepted'; run: Execution }> {
  await flushRefusals(now);
  const missing = () => notFound('REQUEST_NOT_FOUND', `Request ${requestId} is not in this webhook's log.`);
  // An id of no request's shape is no request (checked after the webhook, as an unknown id is).
  if (!REQUEST_ID.test(requestId)) throw missing();
  if (requestId.startsWith('rq_')) {
    const r = await getRefusal(w.webhookId, requestId, now);
    if (!r) throw missing();
    return { kind: 'refused', refusal: r };
  }
  const [run] = requestId.startsWith('ex_') ? await requestRuns(w.accountId, [requestId]) : [];
  if (!run || !isRequestRun(w, run)) throw missing();
  return { kind: 'accepted', run };
}

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

/** `GET /api/webhooks/{id}/requests`: the log of a webhook the caller may see (its owner, or an admin; else 404). */
export async function inboundPage(p: SessionPrincipal, webhookId: string, limit: number, cursor: string | undefined) {
  return pageInbound(await visibleWebhook(p, webhookId), p.userId, limit, cursor);
}

/** `GET /api/webhooks/{id}/requests/{requestId}`. */
export async function inboundRequest(p: SessionPrincipal, webhookId: string, requestId: string) {
  const found = await findInbound(await visibleWebhook(p, webhookId), requestId);
  return found.kind === 'refused' ? refusalView(found.refusal) : acceptedView(found.run);
}

/** The webhook as the console's log pages name it. */
const shownHook = (w: Webhook) => ({ webhookId: w.webhookId, name: w.name, workflowId: w.workflowId, enabled: w.enabled });

/** The console's page of the log (`/console/webhooks/{id}/requests`): the API's page, and the webhook it is of (one read of it). */
export async function inboundLogPage(p: SessionPrincipal, webhookId: string, limit: number, cursor: string | undefined) {
  const w = await visibleWebhook(p, webhookId);
  return { webhook: shownHook(w), ...(await pageInbound(w, p.userId, limit, cursor)) };
}

/** The console's page of one request: the API's item, and the webhook it is of. */
export async function inboundLogRequest(p: SessionPrincipal, webhookId: string, requestId: string) {
  const w = await visibleWebhook(p, webhookId);
  const found = await findInbound(w, requestId);
  return { webhook: shownHook(w), request: found.kind === 'refused' ? refusalView(found.refusal) : await acceptedView(found.run) };
}
