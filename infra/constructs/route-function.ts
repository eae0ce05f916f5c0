import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { NOTIFY_LOG_KEYS, TABLE } from '../../shared/db/table.ts';
import { GRANT_SETTINGS, type Grant } from '../../shared/config.ts';
import { BUNDLING } from './bundling.ts';

/**
 * EventBridge Scheduler as the schedules use it: the stack's schedule group, the role its schedules
 * run as (it may invoke the fire function only), the fire function and the scheduler's DLQ.
 */
export type SchedulerBinding = { groupName: string; scheduleArns: string; roleArn: string; targetArn: string; dlqArn: string };

/** The stateful resources a function can be bound to. */
export type Bindable = {
  table: ITable;
  queue: IQueue;
  notifyQueue: IQueue;
  bucket: IBucket;
  secretsKey: IKey;
  /** Signs reviewers' links (shared/domain/review-links.ts). */
  reviewLinkSecret: ISecret;
  /** The verified SES identity (a domain or an address) approval mail goes out under; absent: no function may send mail. */
  sesIdentity?: string;
  scheduler: SchedulerBinding;
};

/**
 * A route's grants, plus `table:meter`: the counters an API-key request updates (the key's usage and
 * the account's rate-limit window), for routes that otherwise only read.
 */
export type FunctionGrant = Grant | 'table:meter';

/**
 * The DynamoDB actions the code issues (shared/db, shared/domain, shared/engine): no Scan, no
 * BatchWriteItem, no stream or DescribeTable. IAM checks a TransactWriteItems item by item, as the
 * put, update, delete or condition check it holds.
 */
export const TABLE_ACTIONS = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
  meter: ['dynamodb:UpdateItem'],
  log: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
} as const;

/** `http/keys/revoke` → `HttpKeysRevoke`: a stable construct id per handler module (and per queue or bucket name). */
export const idOf = (handler: string) =>
  handler
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export type RouteFunctionProps = {
  /** Module under `functions/` exporting `handler`, without extension (as in the route table). */
  handler: string;
  memoryMb?: number;
  timeoutSeconds?: number;
  reservedConcurrency?: number;
  /** X-Ray active tracing; off by default (docs/deploying.md "Operating", tracing). */
  tracing?: boolean;
  environment?: Record<string, string>;
  /** Of the function's log group; RETAIN by default. */
  logRemovalPolicy?: RemovalPolicy;
};

/**
 * A Lambda with the house defaults: Node 24 on arm64, ESM bundle with the AWS SDK inside (one
 * version, the one the tests ran against), source maps, and its own log group with retention.
 * Its role may write to that log group and nothing else until `bind` grants more (no
 * AWSLambdaBasicExecutionRole, which would let it create and write any log group).
 */
export class RouteFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: RouteFunctionProps) {
    // Created explicitly so retention is a plain property instead of a LogRetention custom resource.
    const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.RETAIN,
    });
    const role = new iam.Role(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Flowgate function ${props.handler}`,
    });
    logGroup.grantWrite(role);
    super(scope, id, {
      role,
      entry: `${repoRoot}functions/${props.handler}.ts`,
      handler: 'handler',
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}package-lock.json`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? 256,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      tracing: props.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      logGroup,
      ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        ...BUNDLING,
        format: OutputFormat.ESM,
        forceDockerBundling: false,
      },
    });
    // Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which have no resource type.
    if (props.tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Only the X-Ray actions of active tracing are on Resource *: X-Ray offers no resource-level permissions',
      });
    }
  }

  /**
   * Grant exactly what the route declares, and hand over the matching resource names as env vars.
   * Returns this function, so a call can be chained onto its creation.
   */
  bind(resources: Bindable, grants: readonly FunctionGrant[]): this {
    const { table, queue, notifyQueue, bucket, secretsKey, sesIdentity, reviewLinkSecret, scheduler } = resources;
    const allow = (actions: readonly string[], on: string[]) =>
      this.addToRolePolicy(new iam.PolicyStatement({ actions: [...actions], resources: on }));
    // The settings a grant gives (GRANT_SETTINGS, which the functions check at their cold start).
    const values = {
      TABLE_NAME: table.tableName,
      RUNS_QUEUE_URL: queue.queueUrl,
      NOTIFY_QUEUE_URL: notifyQueue.queueUrl,
      ARTIFACTS_BUCKET: bucket.bucketName,
      SCHEDULE_GROUP: scheduler.groupName,
      SCHEDULER_ROLE_ARN: scheduler.roleArn,
      SCHEDULE_TARGET_ARN: scheduler.targetArn,
      SCHEDULE_DLQ_ARN: scheduler.dlqArn,
    };
    for (const grant of grants) {
      for (const setting of GRANT_SETTINGS[grant === 'table:meter' ? 'table:write' : grant]) this.addEnvironment(setting, values[setting]);
      switch (grant) {
        case 'table:read':
          // Queries name the table or one of its own indexes, each by name.
          allow(TABLE_ACTIONS.read, [table.tableArn, ...TABLE.indexes.map((ix) => `${table.tableArn}/index/${ix.name}`)]);
          break;
        case 'table:write':
          allow(TABLE_ACTIONS.write, [table.tableArn]);
          break;
        case 'table:meter':
        case 'table:update':
          allow(TABLE_ACTIONS.meter, [table.tableArn]);
          break;
        // Items whose partition key starts with one of the worker's own prefixes, and no other.
        case 'table:log':
          this.addToRolePolicy(
            new iam.PolicyStatement({
              actions: [...TABLE_ACTIONS.log],
              resources: [table.tableArn],
              conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': NOTIFY_LOG_KEYS.map((k) => `${k}*`) } },
            }),
          );
          break;
        case 'queue:requeue':
          allow(['sqs:SendMessage'], [notifyQueue.queueArn]);
          break;
        case 'queue:send':
          // Whatever starts or moves runs also emits events, which go to the notifications queue.
          allow(['sqs:SendMessage'], [queue.queueArn, notifyQueue.queueArn]);
          break;
        // The exact object actions the code uses (presigned GetObject, PutObject); the L2 grants would
        // add s3:GetObject*, s3:List*, s3:GetBucket*, s3:Abort* and the object-lock and tagging puts.
        case 'bucket:read':
          allow(['s3:GetObject'], [bucket.arnForObjects('*')]);
          break;
        case 'bucket:write':
          allow(['s3:PutObject'], [bucket.arnForObjects('*')]);
          break;
        // Account secrets (shared/keyring.ts): sealing needs a data key, opening one Decrypt; never both.
        case 'secrets:encrypt':
          allow(['kms:GenerateDataKey'], [secretsKey.keyArn]);
          this.addEnvironment('SECRETS_KEY_ID', secretsKey.keyArn);
          break;
        case 'secrets:decrypt':
          allow(['kms:Decrypt'], [secretsKey.keyArn]);
          this.addEnvironment('SECRETS_KEY_ID', secretsKey.keyArn);
          break;
        // Approval mail: SendEmail from the stack's verified identity only (no identity: none at all).
        case 'email:send':
          if (!sesIdentity) break;
          allow(['ses:SendEmail'], [Stack.of(this).formatArn({ service: 'ses', resource: 'identity', resourceName: sesIdentity })]);
          this.addEnvironment('SES_IDENTITY', sesIdentity);
          break;
        // Reviewers' links (shared/domain/review-links.ts): the functions that sign or check them read the key, nothing else does.
        case 'links:sign':
          allow(['secretsmanager:GetSecretValue'], [reviewLinkSecret.secretArn]);
          this.addEnvironment('REVIEW_LINK_SECRET_ARN', reviewLinkSecret.secretArn);
          break;
        // The schedules of the stack's group only (no other group, no ListSchedules: the sweep alone
        // lists), passing the scheduler's role only, and only to EventBridge Scheduler.
        case 'schedules:manage':
          allow(['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'], [scheduler.scheduleArns]);
          this.addToRolePolicy(
            new iam.PolicyStatement({
              actions: ['iam:PassRole'],
              resources: [scheduler.roleArn],
              conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
            }),
          );
          break;
        default:
          grant satisfies never;
      }
    }
    return this;
  }
}
