import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { S3Client } from '@aws-sdk/client-s3';
import { config } from './config.ts';

/**
 * AWS SDK clients, built once per process (outside handlers). Endpoints come from the SDK's own
 * configuration (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL_S3`), which is
 * how local mode points the production clients at the emulators.
 */
let ddb: DynamoDBDocumentClient | undefined;
let sqs: SQSClient | undefined;
let s3: Promise<S3Client> | undefined;

export const db = () =>
  (ddb ??= DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  }));
export const queue = () => (sqs ??= new SQSClient({}));
/**
 * The S3 client, loaded on first use (import its commands with `await import(...)` too): few requests
 * need S3, and its client is the costliest SDK module to load at a cold start (README "Performance").
 */
export const storage = () =>
  (s3 ??= import('./s3.ts').then(({ S3Client }) => new S3Client({ forcePathStyle: config().S3_FORCE_PATH_STYLE })));

/** The table's name (checked at the cold start of every function granted the table). */
export const tableName = (): string => config().TABLE_NAME;
