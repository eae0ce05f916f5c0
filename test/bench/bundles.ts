import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions } from '../../infra/constructs/bundling.ts';
import { routes } from '../../functions/routes.ts';
import { WORKERS } from '../../functions/bindings.ts';

export const BUNDLE_DIR = 'bench-results/bundles';
export const KIB = 1024;

/** Every deployed function: one per route, and the workers. */
export const FUNCTIONS = [...new Set([...routes.map((r) => r.handler), 'http/fallback', ...Object.keys(WORKERS)])];

/** Bundle one function (`http/webhooks/trigger`) exactly as the CDK stack does; its path and size in bytes. */
export async function bundle(
  handler: string,
  entry = `functions/${handler}.ts`,
): Promise<{ handler: string; file: string; bytes: number }> {
  const file = join(BUNDLE_DIR, `${handler.replace(/[^\w]+/g, '-').replace(/-+$/, '')}.mjs`);
  await build({ ...esbuildOptions(entry, file), logLevel: 'error' });
  return { handler, file, bytes: statSync(file).size };
}

/** A function's bundle (as `bundle`) and its text. */
export async function bundleText(handler: string) {
  const b = await bundle(handler);
  return { ...b, text: readFileSync(b.file, 'utf8') };
}

/**
 * The floor: a handler that makes only the trigger's SDK calls (DynamoDB document client, SQS and S3
 * for large payloads) and nothing else, bundled the same way. No trigger bundle can be smaller.
 */
export async function sdkFloor() {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const entry = join(BUNDLE_DIR, 'sdk-floor-entry.ts');
  writeFileSync(
    entry,
    `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = async (e: { big?: boolean }) => {
  await db.send(new BatchGetCommand({ RequestItems: {} }));
  await db.send(new UpdateCommand({ TableName: 't', Key: {} }));
  if (e.big) await new S3Client({}).send(new PutObjectCommand({ Bucket: 'b', Key: 'k' }));
  await db.send(new TransactWriteCommand({ TransactItems: [] }));
  await new SQSClient({}).send(new SendMessageCommand({ QueueUrl: 'q', MessageBody: '' }));
};
`,
  );
  return bundle('sdk-floor (trigger SDK calls only)', entry);
}

/** An empty handler, bundled the same way: the baseline of the cold-start measurements. */
export async function emptyHandler() {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const entry = join(BUNDLE_DIR, 'empty-entry.ts');
  writeFileSync(entry, 'export const handler = async () => ({ statusCode: 200 });\n');
  return bundle('empty handler', entry);
}
