import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import { config } from './config.ts';
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

export const db = () =>
  (ddb ??= DynamoDBDocumentClient.from(lean(new DynamoDBClient({})), {
    marshallOptions: { removeUndefinedValues: true },
  }));
export const queue = () => (sqs ??= lean(new SQSClient({})));
/**
 * The S3 client, loaded on first use (import its commands with `await import(...)` too): few requests
 * need S3, and its client is the costliest SDK module to load at a cold start (docs/performance.md).
 */
export const storage = () =>
  (s3 ??= import('./s3.ts').then(({ S3Client }) => withPlugins(new S3Client({ forcePathStyle: config().S3_FORCE_PATH_STYLE }))));

/** The table's name (checked at the cold start of every function granted the table). */
export const tableName = (): string => config().TABLE_NAME;
