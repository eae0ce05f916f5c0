import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { db, tableName } from '../../clients.ts';
import { queryAll } from '../query.ts';
import { retentionTtl } from '../retention.ts';
import { runPartition } from './run-events.ts';

// Access patterns: list a run's artifacts, get one (PK ACC#<account>#EX#<execution>, SK AR#<id>).
export const Artifact = z.object({
  artifactId: z.string(),
  accountId: z.string(),
  executionId: z.string(),
  stepId: z.string(),
  name: z.string(),
  contentType: z.string(),
  size: z.number(),
  createdAt: z.number(),
  /** Object key in the artifacts bucket, chosen by the server: account/execution/artifact. */
  objectKey: z.string(),
});
export type Artifact = z.infer<typeof Artifact>;

export const artifactObjectKey = (accountId: string, executionId: string, artifactId: string) =>
  `${accountId}/${executionId}/${artifactId}`;

const key = (accountId: string, executionId: string, artifactId: string) => ({
  PK: runPartition(accountId, executionId),
  SK: `AR#${artifactId}`,
});

/** The metadata item, written in the checkpoint transaction of the step that stored the object. */
export const artifactPut = (a: Artifact) => ({
  Put: {
    TableName: tableName(),
    Item: { ...key(a.accountId, a.executionId, a.artifactId), type: 'artifact', ...a, ttl: retentionTtl(a.createdAt) },
  },
});

export const listArtifacts = (accountId: string, executionId: string) =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': runPartition(accountId, executionId), ':sk': 'AR#' },
    },
    (i) => Artifact.parse(i),
  );

export async function getArtifact(accountId: string, executionId: string, artifactId: string): Promise<Artifact | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key(accountId, executionId, artifactId) }));
  return Item ? Artifact.parse(Item) : undefined;
}
