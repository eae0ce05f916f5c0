/**
 * The single table's shape, read by the CDK stack and by the local/test setup so both create the
 * same thing. Generic key names; every item has `type` (entity) and keys built by its entity module.
 */
export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  ttlAttribute: 'ttl',
  /**
   * Every index projects keys only: a write that changes none of an item's index keys costs no index
   * write, and a listing reads its page's items from the table in one BatchGet (`shared/db/query.ts`).
   * GSI1: per-account listings that need another sort than the base table (keys by owner, ...).
   * GSI2 (sparse): work the sweeps page through (runs in progress, pending approvals by deadline).
   * GSI3: an account's runs, newest first, write-sharded (`ACC#<account>#EX#<shard>` / `EX#<id>`,
   * shared/db/shards.ts); the run item itself is keyed by the run.
   */
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
  ],
  projection: 'KEYS_ONLY',
  /**
   * The table's stream: the new image of each written item. Its one reader is the audit-events
   * worker's event source mapping (functions/audit-stream.ts), on AWS and locally.
   */
  stream: 'NEW_IMAGE',
} as const;

/**
 * The partition key families the notifications worker writes, and all it may write (its IAM policy's
 * `dynamodb:LeadingKeys`): the delivery log (`DLV#<account>#<delivery>`) and the approval messages
 * sent (`APMSG#<account>#<approval>`).
 */
export const NOTIFY_LOG_KEYS = ['DLV#', 'APMSG#'] as const;

/**
 * The partition-key families an API-key request's metering updates (IAM `dynamodb:LeadingKeys`): the
 * account's rate-limit counters (the account item `ACC#<account>` and `RATE#<account>#<i>`) and the
 * key's use (`KEY#<key>`).
 */
export const METER_KEYS = ['ACC#', 'RATE#', 'KEY#'] as const;

/** The account audit log's partitions (`AUDIT#<account>#<shard>`, shared/db/entities/audit.ts). */
export const AUDIT_KEYS = ['AUDIT#'] as const;

/** The failed-authentication counters (`AUTHFAIL#<address>`, shared/domain/auth-failures.ts), which every route that authenticates updates. */
export const AUTH_FAILURE_KEYS = ['AUTHFAIL#'] as const;

/**
 * The runs worker's time limit (Lambda timeout): twice the longest step (an http_request of 30 s),
 * so a step never starts without the time to finish (the worker hands a run that cannot fit to a
 * fresh invocation first). The queue's visibility timeout is six times it.
 */
export const WORKER_TIMEOUT_SECONDS = 60;
export const RUNS_QUEUE = {
  name: 'runs',
  dlqName: 'runs-dlq',
  maxReceiveCount: 5,
  visibilityTimeoutSeconds: 6 * WORKER_TIMEOUT_SECONDS,
} as const;
/**
 * The heavy lane: a second runs queue, consumed by the same runs worker through an event source of its
 * own (its own maximum concurrency), for the new runs of accounts over `HEAVY_ACCOUNT_REQUESTS_PER_MINUTE`
 * (shared/engine/lanes.ts). Its messages are the runs queue's, so it is configured as that queue is.
 */
export const HEAVY_RUNS_QUEUE = { ...RUNS_QUEUE, name: 'heavy-runs', dlqName: 'heavy-runs-dlq' } as const;
/** Event notifications: retried with exponential visibility backoff, dead-lettered after 8 tries. */
export const NOTIFY_QUEUE = {
  name: 'notifications',
  dlqName: 'notifications-dlq',
  maxReceiveCount: 8,
  visibilityTimeoutSeconds: 60,
} as const;
export const ARTIFACTS_BUCKET = { name: 'artifacts' } as const;
/**
 * The on-failure destination of the functions AWS invokes asynchronously (`schedule/fire`, `sweep/scheduled`;
 * functions/async-invokes.ts): Lambda's async queue sends it the record of an event that failed its
 * retries or grew too old. Nothing consumes it; an operator reads it (docs/deploying.md "Operating").
 */
export const ASYNC_FAILURES_QUEUE = { name: 'async-failures', retentionDays: 14 } as const;
/**
 * The on-failure destination of the audit-events worker's stream mapping (functions/audit-stream.ts):
 * the description of a batch that failed its retries (not its records). Nothing consumes it.
 */
export const AUDIT_EVENTS_DLQ = { name: 'audit-events-dlq', retentionDays: 14 } as const;

/**
 * DynamoDB CreateTable input for the local emulator, derived from TABLE: with the stream the CDK table
 * has, unless `stream: false` (a test table no stream poller reads: DynamoDB Local spends about a
 * third more CPU on each write it also records in a stream).
 */
export function createTableInput(tableName: string, { stream = true }: { stream?: boolean } = {}) {
  const attrs = new Set<string>([TABLE.partitionKey, TABLE.sortKey]);
  for (const ix of TABLE.indexes) {
    attrs.add(ix.partitionKey);
    attrs.add(ix.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    ...(stream && { StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.stream } }),
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
      Projection: { ProjectionType: TABLE.projection },
    })),
  };
}
