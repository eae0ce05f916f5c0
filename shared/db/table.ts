/**
 * The single table's shape, read by the CDK stack and by the local/test setup so both create the
 * same thing. Generic key names; every item has `type` (entity) and keys built by its entity module.
 */
export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'ttl',
  /** GSI1: per-account listings that need another sort than the base table (keys by owner, ...). */
  indexes: [{ name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' }],
} as const;

export const RUNS_QUEUE = { name: 'runs', dlqName: 'runs-dlq', maxReceiveCount: 5, visibilityTimeoutSeconds: 180 } as const;
export const ARTIFACTS_BUCKET = { name: 'artifacts' } as const;

/** DynamoDB CreateTable input for the local emulator, derived from TABLE. */
export function createTableInput(tableName: string) {
  const attrs = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const ix of TABLE.indexes) {
    attrs.add(ix.partitionKey);
    attrs.add(ix.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attrs].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map((ix) => ({
      IndexName: ix.name,
      KeySchema: [
        { AttributeName: ix.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: ix.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
