import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { MiddlewareStack } from '@smithy/types';
import { describe, expect, it } from 'vitest';
import { db, queue, tableName } from '../../shared/clients.ts';
import { config } from '../../shared/config.ts';

type Sent = { headers: Record<string, string> };

/** The headers of each request as it leaves the client (after signing), for the given client's stack. */
function capture(stack: MiddlewareStack<object, object>) {
  const sent: Sent[] = [];
  stack.add(
    (next) => async (args) => {
      sent.push({ headers: { ...(args as { request: Sent }).request.headers } });
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'captureSentHeaders' },
  );
  return { sent, stop: () => stack.remove('captureSentHeaders') };
}

describe('the shared SDK clients (shared/clients.ts)', () => {
  it('sign every DynamoDB and SQS request with one signer per client and send no SDK user-agent telemetry', async () => {
    const ddb = capture(db().middlewareStack as never);
    const sqs = capture(queue().middlewareStack as never);
    try {
      for (let i = 0; i < 3; i++) await db().send(new GetCommand({ TableName: tableName(), Key: { PK: 'none', SK: `none#${i}` } }));
      await queue().send(new GetQueueAttributesCommand({ QueueUrl: config().RUNS_QUEUE_URL, AttributeNames: ['All'] }));
    } finally {
      ddb.stop();
      sqs.stop();
    }
    expect(ddb.sent).toHaveLength(3);
    expect(sqs.sent).toHaveLength(1);
    for (const { headers } of [...ddb.sent, ...sqs.sent]) {
      expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=\S+, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/);
      expect(Object.keys(headers).map((h) => h.toLowerCase())).not.toContain('x-amz-user-agent');
      expect(headers['user-agent'] ?? headers['User-Agent']).toBeUndefined();
    }
    const signer = db().config.signer as unknown as () => Promise<unknown>;
    expect(await signer()).toBe(await signer());
  });
});
