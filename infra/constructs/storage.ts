import { type CfnElement, Duration, Names, RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import {
  ARTIFACTS_BUCKET,
  ASYNC_FAILURES_QUEUE,
  HEAVY_RUNS_QUEUE,
  NOTIFY_QUEUE,
  RUNS_QUEUE,
  TABLE,
  WORKER_TIMEOUT_SECONDS,
} from '../../shared/db/table.ts';
import type { Units } from '../settings.ts';
import { idOf } from './route-function.ts';

/**
 * The stateful resources: the one table, the runs queues (the main lane and the heavy lane) and the
 * notifications queue with their DLQs, the asynchronous invocations' on-failure queue, the artifacts
 * bucket and its access logs.
 */
export type Storage = {
  table: dynamodb.Table;
  queue: sqs.Queue;
  /** The heavy lane's runs queue (shared/engine/lanes.ts). */
  heavyQueue: sqs.Queue;
  notifyQueue: sqs.Queue;
  runsDlq: sqs.IQueue;
  heavyRunsDlq: sqs.IQueue;
  notifyDlq: sqs.IQueue;
  /** Where Lambda sends the events of `schedule/fire` and `sweep/scheduled` that failed their retries (functions/async-invokes.ts). */
  asyncFailures: sqs.Queue;
  bucket: s3.Bucket;
  accessLogsBucket: s3.Bucket;
};

/**
 * Adds the stateful resources to the stack itself (not to a construct of their own, so their logical
 * ids are those they had when the stack was one file: a changed id would replace a table or a bucket).
 */
export function addStorage(
  stack: Stack,
  props: {
    deletionProtection: boolean;
    removalPolicy: RemovalPolicy;
    retentionDays: number;
    /** `capacitySettings()`: each part's warm throughput and its optional on-demand maximum. */
    capacity: { warm: Record<string, Units>; max: Record<string, Partial<Units>> };
  },
): Storage {
  const { deletionProtection, removalPolicy, retentionDays, capacity } = props;
  // What the table and each index serve at once (pre-warmed above AWS's own), and at most (none by default).
  const throughput = (part: string) => {
    const warm = capacity.warm[part] as Units;
    const max = capacity.max[part];
    return {
      warmThroughput: { readUnitsPerSecond: warm.read, writeUnitsPerSecond: warm.write },
      ...(max?.read !== undefined ? { maxReadRequestUnits: max.read } : {}),
      ...(max?.write !== undefined ? { maxWriteRequestUnits: max.write } : {}),
    };
  };
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
    timeToLiveAttribute: TABLE.ttlAttribute,
    // New images of the written items: the audit-events worker puts each new audit entry on EventBridge
    // (infra/constructs/audit-events.ts). Added to a deployed table in place.
    stream: dynamodb.StreamViewType[TABLE.stream],
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    deletionProtection,
    removalPolicy,
    ...throughput('table'),
  });
  for (const ix of TABLE.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: ix.name,
      partitionKey: { name: ix.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: ix.sortKey, type: dynamodb.AttributeType.STRING },
      // Keys only (TABLE.projection): a write that leaves an item's index keys alone costs no index write.
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
      ...throughput(ix.name),
    });
  }

  const queueWithDlq = (q: typeof RUNS_QUEUE | typeof HEAVY_RUNS_QUEUE | typeof NOTIFY_QUEUE) => {
    const dlq = new sqs.Queue(stack, idOf(q.dlqName), {
      queueName: `${stack.stackName}-${q.dlqName}`,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    return new sqs.Queue(stack, idOf(q.name), {
      queueName: `${stack.stackName}-${q.name}`,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS's advice for Lambda consumers: at least six times the function timeout.
      visibilityTimeout: Duration.seconds(Math.max(q.visibilityTimeoutSeconds, 6 * WORKER_TIMEOUT_SECONDS)),
      deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
    });
  };
  const queue = queueWithDlq(RUNS_QUEUE);
  const heavyQueue = queueWithDlq(HEAVY_RUNS_QUEUE);
  const notifyQueue = queueWithDlq(NOTIFY_QUEUE);
  const asyncFailures = new sqs.Queue(stack, idOf(ASYNC_FAILURES_QUEUE.name), {
    queueName: `${stack.stackName}-${ASYNC_FAILURES_QUEUE.name}`,
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(ASYNC_FAILURES_QUEUE.retentionDays),
  });
  Validations.of(asyncFailures).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason:
      'This queue is the on-failure destination of the asynchronous invocations (schedule fires, scheduled sweeps): a dead-letter queue itself; nothing consumes it',
  });
  const dlqOf = (q: sqs.Queue) => {
    if (!q.deadLetterQueue) throw new Error(`${q.node.id} has no dead-letter queue`);
    return q.deadLetterQueue.queue;
  };

  // Server access logs of the artifacts bucket: who downloaded which artifact through a presigned URL.
  const accessLogsBucket = new s3.Bucket(stack, 'AccessLogs', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    // Log delivery supports SSE-S3 only on the target bucket.
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    lifecycleRules: [{ expiration: Duration.days(90) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  Validations.of(accessLogsBucket).acknowledge({
    id: 'AwsSolutions-S1',
    reason: 'This bucket is the server-access-log destination of the artifacts bucket; logging it would log the log delivery itself',
  });
  const bucket = new s3.Bucket(stack, idOf(ARTIFACTS_BUCKET.name), {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    versioned: false,
    serverAccessLogsBucket: accessLogsBucket,
    serverAccessLogsPrefix: 'artifacts/',
    // Artifacts go with their runs: the objects expire after the retention the metadata items' TTL uses.
    lifecycleRules: [
      {
        abortIncompleteMultipartUploadAfter: Duration.days(1),
        noncurrentVersionExpiration: Duration.days(7),
        expiration: Duration.days(retentionDays),
      },
    ],
    // Emptying the bucket on delete would need a custom-resource Lambda; a non-empty bucket is kept.
    removalPolicy: RemovalPolicy.RETAIN,
  });
  return {
    table,
    queue,
    heavyQueue,
    notifyQueue,
    runsDlq: dlqOf(queue),
    heavyRunsDlq: dlqOf(heavyQueue),
    notifyDlq: dlqOf(notifyQueue),
    asyncFailures,
    bucket,
    accessLogsBucket,
  };
}

/**
 * The one cdk-nag wildcard finding that names a resource of this stack: the artifact objects (keys
 * are account/execution/artifact, made at run time). Acknowledged for that resource pattern only,
 * as written in the stack and in the route functions' stack, where the bucket's ARN is the parameter
 * CDK names after the bucket; a wildcard on anything else is still reported.
 */
export function acknowledgeDataWildcards(stack: Stack, artifacts: s3.Bucket) {
  const bucket = artifacts.node.defaultChild as CfnElement;
  const reason =
    'Object keys of the artifacts bucket are account/execution/artifact ids made at run time; only s3:GetObject or s3:PutObject on this one bucket';
  Validations.of(stack).acknowledge(
    { id: `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(bucket)}.Arn>/*]`, reason },
    { id: `AwsSolutions-IAM5[Resource::<referenceto${Names.uniqueId(bucket)}Arn>/*]`, reason },
  );
}
