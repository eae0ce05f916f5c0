import { createHash, randomUUID } from 'node:crypto';
import { db, queue, storage } from '../../shared/clients.ts';

/**
 * I/O stubbed at the SDK's network boundary: the shared clients' HTTP handler is replaced by one that
 * answers in memory, so each call still goes through the whole SDK (middleware, serialization,
 * SigV4 signing, response parsing) but no socket, TLS or server. DynamoDB keeps the items it is given
 * (PutItem, the Puts of TransactWriteItems and BatchWriteItem) in their wire form and returns them to GetItem and
 * BatchGetItem; every UpdateItem succeeds and returns the item kept with its rate count at 1 (a
 * first request in its rate-limit window);
 * SQS accepts every message; S3 every object. Enough for the request paths the benchmarks drive.
 */
type Item = Record<string, Record<string, unknown>>;
type Request = { headers: Record<string, string>; body?: unknown; method: string; path: string };

const items = new Map<string, Item>();
let sealed = false;
/** From now on writes are acknowledged but not kept (a long run must not grow the heap). */
export const sealFakeTable = () => {
  sealed = true;
};
const keep = (item: Item) => {
  if (!sealed) items.set(keyOf(item), item);
};
const keyOf = (k: Item) => `${JSON.stringify(k.PK)}|${JSON.stringify(k.SK)}`;
export const calls: Record<string, number> = {};

const utf8 = new TextDecoder();
const bodyText = (body: unknown) => (typeof body === 'string' ? body : body instanceof Uint8Array ? utf8.decode(body) : '');

function dynamodb(op: string, input: any): unknown {
  switch (op) {
    case 'PutItem':
      keep(input.Item);
      return {};
    case 'GetItem': {
      const item = items.get(keyOf(input.Key));
      return item ? { Item: item } : {};
    }
    case 'BatchGetItem':
      return {
        Responses: Object.fromEntries(
          Object.entries(input.RequestItems as Record<string, { Keys: Item[] }>).map(([table, { Keys }]) => [
            table,
            Keys.map((k) => items.get(keyOf(k))).filter(Boolean),
          ]),
        ),
        UnprocessedKeys: {},
      };
    case 'UpdateItem': {
      if (!input.ReturnValues || input.ReturnValues === 'NONE') return {};
      // The item as kept, with its counter at 1 (a first request in its window): the account's rate
      // count (which returns the plan) and the key's usage.
      const start = input.ExpressionAttributeValues?.[':start'] ?? { N: '0' };
      return { Attributes: { ...items.get(keyOf(input.Key)), rateCount: { N: '1' }, rateWindow: start } };
    }
    case 'TransactWriteItems':
      for (const t of input.TransactItems as { Put?: { Item: Item } }[]) if (t.Put) keep(t.Put.Item);
      return {};
    case 'BatchWriteItem':
      for (const requests of Object.values(input.RequestItems as Record<string, { PutRequest?: { Item: Item } }[]>))
        for (const r of requests) if (r.PutRequest) keep(r.PutRequest.Item);
      return { UnprocessedItems: {} };
    case 'Query':
      return { Items: [], Count: 0, ScannedCount: 0 };
    default:
      throw new Error(`fake DynamoDB: ${op} is not stubbed`);
  }
}

function sqs(op: string, input: any): unknown {
  const md5 = (s: string) => createHash('md5').update(s).digest('hex');
  switch (op) {
    case 'SendMessage':
      return { MessageId: randomUUID(), MD5OfMessageBody: md5(input.MessageBody) };
    case 'SendMessageBatch':
      return {
        Successful: (input.Entries as { Id: string; MessageBody: string }[]).map((e) => ({
          Id: e.Id,
          MessageId: randomUUID(),
          MD5OfMessageBody: md5(e.MessageBody),
        })),
        Failed: [],
      };
    default:
      throw new Error(`fake SQS: ${op} is not stubbed`);
  }
}

const json = (body: unknown, contentType: string) => ({
  statusCode: 200,
  headers: { 'content-type': contentType, 'x-amzn-requestid': randomUUID() },
  body: new Uint8Array(Buffer.from(JSON.stringify(body))),
});

const handlerFor = (service: 'dynamodb' | 'sqs' | 's3') => ({
  metadata: { handlerProtocol: 'http/1.1' },
  handle: async (request: Request) => {
    if (service === 's3') {
      calls['s3 PutObject'] = (calls['s3 PutObject'] ?? 0) + 1;
      return { response: { statusCode: 200, headers: { etag: '"0"' }, body: new Uint8Array() } };
    }
    const op = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    calls[`${service} ${op}`] = (calls[`${service} ${op}`] ?? 0) + 1;
    const input = JSON.parse(bodyText(request.body) || '{}');
    return {
      response:
        service === 'dynamodb'
          ? json(dynamodb(op, input), 'application/x-amz-json-1.0')
          : json(sqs(op, input), 'application/x-amz-json-1.0'),
    };
  },
  updateHttpClientConfig: () => undefined,
  httpHandlerConfigs: () => ({}),
  destroy: () => undefined,
});

/** Replace the HTTP handler of the shared clients (`db()`, `queue()`, `storage()`); call before their first use. */
export async function fakeAws(): Promise<void> {
  (db().config as { requestHandler: unknown }).requestHandler = handlerFor('dynamodb');
  (queue().config as { requestHandler: unknown }).requestHandler = handlerFor('sqs');
  ((await storage()).config as { requestHandler: unknown }).requestHandler = handlerFor('s3');
}
