import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type PutEntry, startEventBridgeListener } from '../support/eventbridge-listener.ts';

// The audit-events worker (functions/worker/audit-events.ts) with the production EventBridge client
// pointed at a listener that answers PutEvents as AWS documents it.
const listener = await startEventBridgeListener();
process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = listener.url;
// One attempt per request: the worker's own resends are what is tested, not the SDK's retries.
process.env.AWS_MAX_ATTEMPTS = '1';
const { handler, AUDIT_EVENT } = await import('../../functions/worker/audit-events.ts');

afterAll(() => listener.close());
beforeEach(() => listener.reset());

let seq = 1000;
/** An audit entry as the audit log writes it (shared/db/entities/audit.ts). */
const entry = (n: number, over: Record<string, unknown> = {}) => ({
  auditId: `ae_${String(n).padStart(4, '0')}`,
  accountId: 'acc_1',
  at: Date.UTC(2026, 10, 28, 0, 0, n),
  action: 'key.created',
  actor: { kind: 'user', userId: 'usr_1', email: 'ops@acme.example' },
  channel: 'console',
  ip: '203.0.113.7',
  object: { type: 'key', id: `key_${n}`, name: 'deploy hook' },
  details: { scopes: ['WORKFLOW_READ'], validityDays: 90 },
  ...over,
});
/** The stored item: the entry with its keys, index keys, type and TTL. */
const item = (e: ReturnType<typeof entry>) => ({
  PK: `AUDIT#${e.accountId}#3`,
  SK: `${new Date(e.at).toISOString()}#${e.auditId}`,
  GSI1PK: `AUDITBY#${e.accountId}#usr_1#3`,
  GSI1SK: `${new Date(e.at).toISOString()}#${e.auditId}`,
  type: 'audit',
  ...e,
  ttl: Math.floor(e.at / 1000) + 365 * 86_400,
});
const record = (image: Record<string, unknown>, eventName: DynamoDBRecord['eventName'] = 'INSERT'): DynamoDBRecord => ({
  eventID: String(++seq),
  eventName,
  eventSource: 'aws:dynamodb',
  awsRegion: 'eu-west-1',
  dynamodb: {
    Keys: marshall({ PK: image.PK, SK: image.SK }) as never,
    NewImage: marshall(image, { removeUndefinedValues: true }) as never,
    SequenceNumber: String(seq),
    StreamViewType: 'NEW_IMAGE',
  },
});
const streamEvent = (records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });
const details = (entries: PutEntry[]) => entries.map((e) => JSON.parse(e.Detail as string));

describe('audit entries onto EventBridge', () => {
  beforeAll(() => expect(listener.requests).toEqual([]));

  it('puts each new audit entry on the default bus: source flowgate, detail-type "Audit entry", the entry without the table attributes', async () => {
    const entries = [
      entry(1),
      entry(2, { action: 'webhook.deleted', actor: { kind: 'key', keyId: 'key_9' }, channel: 'api', details: undefined }),
    ];
    const res = await handler(streamEvent(entries.map((e) => record(item(e)))));
    expect(res).toEqual({ batchItemFailures: [] });
    expect(listener.requests).toHaveLength(1);
    const [req] = listener.requests;
    expect(req?.target).toBe('AWSEvents.PutEvents');
    expect(req?.contentType).toBe('application/x-amz-json-1.1');
    // Signed as AWS expects (SigV4 for the events service).
    expect(req?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/events\/aws4_request/);
    for (const [i, sent] of (req?.entries ?? []).entries()) {
      expect(sent.Source).toBe('flowgate');
      expect(sent.DetailType).toBe('Audit entry');
      // The default bus: no bus named.
      expect(sent.EventBusName).toBeUndefined();
      // The event's time is the entry's (the SDK sends epoch seconds).
      expect(Number(sent.Time) * 1000).toBe(entries[i]?.at);
    }
    expect(details(req?.entries ?? [])).toEqual(entries.map((e) => JSON.parse(JSON.stringify(e))));
    for (const d of details(req?.entries ?? []))
      for (const k of ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'type', 'ttl']) expect(d).not.toHaveProperty(k);
    expect(AUDIT_EVENT).toEqual({ source: 'flowgate', detailType: 'Audit entry' });
  });

  it('sends nothing for other records: other item types, updates, removes (the mapping filters them too)', async () => {
    const run = { PK: 'EX#acc_1#ex_1', SK: 'EXECUTION', type: 'execution', status: 'RUNNING' };
    const res = await handler(
      streamEvent([
        record(run),
        record(item(entry(3)), 'MODIFY'),
        record(item(entry(4)), 'REMOVE'),
        record({ ...run, type: 'Audit' }),
        // An approval's own history record: of type audit, but not the account's audit log.
        record({ PK: 'ACC#acc_1#AP#ap_1', SK: 'AUDIT#01', type: 'audit', decision: 'APPROVED' }),
      ]),
    );
    expect(res).toEqual({ batchItemFailures: [] });
    expect(listener.requests).toEqual([]);
    // ... and among other records, only the audit entry goes.
    await handler(streamEvent([record(run), record(item(entry(5))), record(item(entry(6)), 'MODIFY')]));
    expect(details(listener.entries()).map((d) => d.auditId)).toEqual(['ae_0005']);
  });

  it('sends again, within the invocation, the entries PutEvents reports as failed; the others once', async () => {
    const refusedOnce = new Set<string>();
    listener.state.refuse = (e) => {
      const { auditId } = JSON.parse(e.Detail as string);
      if (auditId !== 'ae_0008' || refusedOnce.has(auditId)) return undefined;
      refusedOnce.add(auditId);
      return 'ThrottlingException';
    };
    const res = await handler(streamEvent([7, 8, 9].map((n) => record(item(entry(n))))));
    expect(res).toEqual({ batchItemFailures: [] });
    expect(listener.requests.map((r) => details(r.entries).map((d) => d.auditId))).toEqual([
      ['ae_0007', 'ae_0008', 'ae_0009'],
      ['ae_0008'],
    ]);
  });

  it('reports the entries still failed after the resends as batch item failures (by sequence number), the others put', async () => {
    listener.state.refuse = (e) => (JSON.parse(e.Detail as string).action === 'doomed' ? 'InternalFailure' : undefined);
    const records = [record(item(entry(10))), record(item(entry(11, { action: 'doomed' }))), record(item(entry(12)))];
    const res = await handler(streamEvent(records));
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: records[1]?.dynamodb?.SequenceNumber }]);
    // The first request had all three, then two resends of the failed one only.
    expect(listener.requests.map((r) => r.entries.length)).toEqual([3, 1, 1]);
  });

  it('reports every entry of a request that fails whole, once its resends fail too', async () => {
    listener.state.down = 3;
    const records = [13, 14].map((n) => record(item(entry(n))));
    const res = await handler(streamEvent(records));
    expect(res.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(records.map((r) => r.dynamodb?.SequenceNumber));
    expect(listener.requests).toHaveLength(3);
    // ... and a request that fails, then answers, puts them all.
    listener.reset();
    listener.state.down = 1;
    expect(await handler(streamEvent(records))).toEqual({ batchItemFailures: [] });
    expect(listener.requests).toHaveLength(2);
  });

  it('sends at most 10 entries a request (PutEvents’ limit), in order', async () => {
    const records = Array.from({ length: 23 }, (_, i) => record(item(entry(100 + i))));
    expect(await handler(streamEvent(records))).toEqual({ batchItemFailures: [] });
    expect(listener.requests.map((r) => r.entries.length)).toEqual([10, 10, 3]);
    expect(details(listener.entries()).map((d) => d.auditId)).toEqual(records.map((_, i) => `ae_0${100 + i}`));
  });
});
