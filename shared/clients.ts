import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Pluggable } from '@smithy/types';
import { config } from './config.ts';
import { isTransactionConflict } from './errors.ts';
import { withPlugins } from './sdk-plugins.ts';

/**
 * AWS SDK clients, built once per process (outside handlers). Endpoints come from the SDK's own
 * configuration (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL_S3`), which is
 * how local mode points the production clients at the emulators.
 */
let ddb: DynamoDBDocumentClient | undefined;
let sqs: SQSClient | undefined;
let s3: Promise<S3Client> | undefined;

/**
 * Per-request work the SDK does that a client with one region and one service does not need: it
 * builds a new SigV4 signer (copying the whole client configuration) for every request; one is kept.
 * The User-Agent header (the SDK's telemetry: versions and features) is rebuilt and escaped per
 * request; it changes nothing in what AWS does, so it is not sent.
 */
function lean<C extends { config: { signer?: unknown }; middlewareStack: { remove: (name: string) => boolean; use: (p: any) => void } }>(
  client: C,
): C {
  const make = client.config.signer as ((scheme?: unknown) => Promise<unknown>) | undefined;
  if (typeof make === 'function') {
    let signer: Promise<unknown> | undefined;
    client.config.signer = (scheme?: unknown) => (signer ??= make(scheme));
  }
  client.middlewareStack.remove('getUserAgentMiddleware');
  return withPlugins(client);
}

/** Tries of a DynamoDB call refused for a transaction in flight on one of its items (below). */
export const CONFLICT_TRIES = 8;

/**
 * DynamoDB refuses a write (or cancels a transaction) while another transaction holds one of its items
 * (`TransactionConflict`): nothing was written, and AWS's advice is to send it again after a pause; the
 * SDK does not. Every call is sent again, as it was, up to CONFLICT_TRIES times with exponential
 * backoff and full jitter (up to 10, 20, 40, … ms, at most 500; about a second in all): its conditions are checked afresh each time,
 * so a write that lost its race to the other fails its condition then, as if it had come later.
 */
const retryTransactionConflicts: Pluggable<any, any> = {
  applyToStack: (stack) =>
    stack.add(
      (next) => async (args) => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await next({ ...args });
          } catch (e) {
            if (!isTransactionConflict(e) || attempt >= CONFLICT_TRIES) throw e;
            await new Promise((r) => setTimeout(r, Math.random() * Math.min(500, 10 * 2 ** (attempt - 1))));
          }
        }
      },
      { step: 'initialize', priority: 'high', name: 'retryTransactionConflicts' },
    ),
};

export const db = () =>
  (ddb ??= DynamoDBDocumentClient.from(lean(withConflictRetries(new DynamoDBClient({}))), {
    marshallOptions: { removeUndefinedValues: true },
  }));
function withConflictRetries(client: DynamoDBClient): DynamoDBClient {
  client.middlewareStack.use(retryTransactionConflicts);
  return client;
}

export const queue = () => (sqs ??= lean(new SQSClient({})));

/**
 * Tests that run file after file in one process: the next call builds new clients, as a new process would,
 * with no socket a server may have closed meanwhile and a full retry quota (the SDK's, which a file of
 * throttles and faults drains). The old clients are left to finish what they were doing.
 */
export function resetClients(): void {
  ddb = undefined;
  sqs = undefined;
  s3 = undefined;
}
/**
 * The S3 client, loaded on first use (import its commands with `await import(...)` too): few requests
 * need S3, and its client is the costliest SDK module to load at a cold start (docs/performance.md).
 */
export const storage = () =>
  (s3 ??= import('./s3.ts').then(({ S3Client }) => withPlugins(new S3Client({ forcePathStyle: config().S3_FORCE_PATH_STYLE }))));

/** The table's name (checked at the cold start of every function granted the table). */
export const tableName = (): string => config().TABLE_NAME;
