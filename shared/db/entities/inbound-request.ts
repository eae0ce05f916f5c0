import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { putNew } from '../batch.ts';
import { getItems } from '../query.ts';
import { type Execution, executionKey, parseExecution } from './execution.ts';

// A webhook's inbound log of refused requests (docs/webhooks.md "Why was my request refused?"): a ring of
// INBOUND_LOG_SIZE slots, each a partition of its own (`WHREQ#<webhook>#<slot>` / `REQ`: a flood's puts
// spread over them), and one head (`WH#<webhook>` / `INBOUND`: the last sequence number given and the
// refusals counted by code). A request's seq, from the head, names its slot (seq mod size), so the log
// never holds more than INBOUND_LOG_SIZE requests; its id carries its seq, so a read by id is one GetItem.
// Accepted requests are not written here: their runs are the record (`requestRuns`).

/** Refused requests a webhook keeps: the newest this many. */
export const INBOUND_LOG_SIZE = 50;
/** Bytes of a refused request's body kept (the rest is cut: `bodyTruncated`). */
export const INBOUND_BODY_BYTES = 16 * 1024;
/** Days a refused request is kept (its item's TTL). */
export const INBOUND_RETENTION_DAYS = 7;

export const InboundRequest = z.object({
  requestId: z.string(),
  webhookId: z.string(),
  accountId: z.string(),
  seq: z.number().int(),
  at: z.number(),
  ip: z.string(),
  method: z.string(),
  status: z.number().int(),
  code: z.string(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  bodyTruncated: z.boolean(),
  /** It passed the webhook's credential check (refused later: address, disabled, rate limit): a replay may start it. */
  authenticated: z.boolean(),
  ttl: z.number(),
});
export type InboundRequest = z.infer<typeof InboundRequest>;
/** A refusal before its place in the log is known (the flush gives it a seq and its id). */
export type RefusedRequest = Omit<InboundRequest, 'requestId' | 'seq' | 'ttl'>;

const headKey = (webhookId: string) => ({ PK: `WH#${webhookId}`, SK: 'INBOUND' });
const slotKey = (webhookId: string, seq: number) => ({ PK: `WHREQ#${webhookId}#${seq % INBOUND_LOG_SIZE}`, SK: 'REQ' });

/** A refused request's id: `rq_`, its time as a ULID's first 10 characters, and its seq in base 36 on 16 (an id's 26 characters). */
const requestIdOf = (ulidTime: string, seq: number) => `rq_${ulidTime}${seq.toString(36).padStart(16, '0')}`;
/** The seq a refused request's id carries; undefined for anything else. */
export function seqOfRequestId(requestId: string): number | undefined {
  const m = /^rq_[0-9a-hjkmnp-tv-z]{10}([0-9a-z]{16})$/.exec(requestId);
  const seq = m ? Number.parseInt(m[1] as string, 36) : Number.NaN;
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * Write a webhook's refusals of one flush: one UpdateItem of the head (the seqs they take, every
 * refusal counted by code, `counts`, the written and the not written alike), then their slots in one
 * BatchWriteItem (at most 25). Returns the requests as written.
 */
export async function writeRefusals(
  webhookId: string,
  requests: readonly (RefusedRequest & { ulidTime: string })[],
  counts: ReadonlyMap<string, number>,
): Promise<InboundRequest[]> {
  const added = [...counts];
  const { Attributes } = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: headKey(webhookId),
      UpdateExpression: `ADD #seq :n${added.map((_, i) => `, #c${i} :c${i}`).join('')} SET #type = :type`,
      ExpressionAttributeNames: {
        '#seq': 'seq',
        '#type': 'type',
        ...Object.fromEntries(added.map(([code], i) => [`#c${i}`, `c#${code}`])),
      },
      ExpressionAttributeValues: {
        ':n': requests.length,
        ':type': 'inboundHead',
        ...Object.fromEntries(added.map(([, n], i) => [`:c${i}`, n])),
      },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const last = Number(Attributes?.seq ?? 0);
  const written = requests.map(({ ulidTime, ...r }, i): InboundRequest => {
    const seq = last - requests.length + 1 + i;
    return { ...r, seq, requestId: requestIdOf(ulidTime, seq), ttl: Math.floor(r.at / 1000) + INBOUND_RETENTION_DAYS * 86_400 };
  });
  if (written.length) await putNew(written.map((r) => ({ ...slotKey(webhookId, r.seq), type: 'inboundRequest', ...r })));
  return written;
}

/** The head: the last seq given (0: none yet) and the refusals counted by code. */
export async function readInboundHead(webhookId: string): Promise<{ seq: number; refused: Record<string, number> }> {
  const { Item = {} } = await db().send(new GetCommand({ TableName: tableName(), Key: headKey(webhookId) }));
  const refused = Object.fromEntries(
    Object.entries(Item)
      .filter(([k]) => k.startsWith('c#'))
      .map(([k, v]) => [k.slice(2), Number(v)]),
  );
  return { seq: Number(Item.seq ?? 0), refused };
}

const live = (webhookId: string, now: number) => (r: InboundRequest) => r.webhookId === webhookId && r.ttl > now / 1000;

/**
 * The refused requests of these seqs, in their order (one BatchGet): a slot that holds another seq
 * since (overwritten by a newer refusal), or an expired one, gives nothing.
 */
export async function readRefusals(webhookId: string, seqs: readonly number[], now: number): Promise<InboundRequest[]> {
  if (seqs.length === 0) return [];
  const items = (await getItems(seqs.map((s) => slotKey(webhookId, s)))).map((i) => InboundRequest.parse(i));
  const bySeq = new Map(items.filter(live(webhookId, now)).map((r) => [r.seq, r]));
  return seqs.flatMap((s) => bySeq.get(s) ?? []);
}

/** One refused request by id, if the log still holds it. */
export async function getRefusal(webhookId: string, requestId: string, now: number): Promise<InboundRequest | undefined> {
  const seq = seqOfRequestId(requestId);
  if (seq === undefined) return undefined;
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: slotKey(webhookId, seq) }));
  const r = Item ? InboundRequest.parse(Item) : undefined;
  return r && r.requestId === requestId && live(webhookId, now)(r) ? r : undefined;
}

/** Accepted requests are their runs: these runs of the account, whole (one BatchGet), in the ids' order. */
export async function requestRuns(accountId: string, executionIds: readonly string[]): Promise<Execution[]> {
  return (await getItems(executionIds.map((id) => executionKey(accountId, id)))).map(parseExecution);
}
