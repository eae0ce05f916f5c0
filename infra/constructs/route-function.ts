import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { GRANT_SETTINGS, type Grant } from '../../shared/config.ts';
import { type Arns, type FunctionGrant, statementsOf } from '../iam.ts';
import { bundleFunction } from './bundling.ts';

/**
 * EventBridge Scheduler as the schedules use it: the stack's schedule group, the role its schedules
 * run as (it may invoke the fire function only), the fire function and the scheduler's DLQ.
 */
export type SchedulerBinding = { groupName: string; scheduleArns: string; roleArn: string; targetArn: string; dlqArn: string };

/** The stateful resources a function can be bound to. */
export type Bindable = {
  table: ITable;
  queue: IQueue;
  /** The heavy lane's runs queue: whoever may send run messages may send them there too. */
  heavyQueue: IQueue;
  notifyQueue: IQueue;
  bucket: IBucket;
  secretsKey: IKey;
  /** Signs reviewers' links (shared/domain/review-links.ts). */
  reviewLinkSecret: ISecret;
  /** The verified SES identity (a domain or an address) approval mail goes out under; absent: no function may send mail. */
  sesIdentity?: string;
  scheduler: SchedulerBinding;
};

export type { FunctionGrant };

/** `http/keys/revoke` → `HttpKeysRevoke`: a stable construct id per handler module (and per queue or bucket name). */
export const idOf = (handler: string) =>
  handler
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

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
 * version, the one the tests ran against), its source map kept out of the asset, and its own log
 * group with retention.
 * Its role may write to that log group and nothing else until `bind` grants more (no
 * AWSLambdaBasicExecutionRole, which would let it create and write any log group).
 */
export class RouteFunction extends lambda.Function {
  /** The module under `functions/` (as in the route table). */
  readonly handler: string;
  /** What `bind` gave the function: its grants and the ARNs they name (test/infra/iam.test.ts pins the role to them). */
  readonly bindings: { grants: readonly FunctionGrant[]; arns: Arns }[] = [];
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
      code: bundleFunction(scope, props.handler),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? 256,
      timeout: Duration.seconds(props.timeoutSeconds ?? 10),
      tracing: props.tracing ? lambda.Tracing.ACTIVE : lambda.Tracing.DISABLED,
      logGroup,
      ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
      // No NODE_OPTIONS=--enable-source-maps: its map is not in the asset (`bundleFunction`), and
      // enabling maps cost 64-426 ms on a warm instance's first error.
      environment: { ...props.environment },
    });
    this.handler = props.handler;
    // Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which have no resource type.
    if (props.tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Only the X-Ray actions of active tracing are on Resource *: X-Ray offers no resource-level permissions',
      });
    }
  }

  /**
   * Grant exactly what the function declares (its statements: infra/iam.ts, the data the local stack
   * enforces too), and hand over the matching resource names as env vars. Returns this function, so a
   * call can be chained onto its creation.
   */
  bind(
    resources: Bindable,
    grants: readonly FunctionGrant[],
    more: Partial<Pick<Arns, 'auditDlq' | 'cursorSecret' | 'asyncFailures'>> = {},
  ): this {
    const { table, queue, heavyQueue, notifyQueue, bucket, secretsKey, sesIdentity, reviewLinkSecret, scheduler } = resources;
    const stack = Stack.of(this);
    const arns: Arns = {
      table: table.tableArn,
      tableStream: table.tableStreamArn ?? '',
      queue: queue.queueArn,
      heavyQueue: heavyQueue.queueArn,
      notifyQueue: notifyQueue.queueArn,
      auditDlq: more.auditDlq ?? '',
      asyncFailures: more.asyncFailures ?? '',
      bucket: bucket.bucketArn,
      secretsKey: secretsKey.keyArn,
      reviewLinkSecret: reviewLinkSecret.secretArn,
      cursorSecret: more.cursorSecret ?? '',
      ...(sesIdentity && { sesIdentity: stack.formatArn({ service: 'ses', resource: 'identity', resourceName: sesIdentity }) }),
      schedules: scheduler.scheduleArns,
      schedulerRole: scheduler.roleArn,
      eventBus: stack.formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' }),
    };
    this.bindings.push({ grants, arns });
    for (const s of statementsOf(grants, arns)) {
      if (s.resources.some((r) => r === ''))
        throw new Error(`${this.node.id}: a grant names a resource the stack did not give (${s.actions})`);
      this.addToRolePolicy(
        new iam.PolicyStatement({
          actions: [...s.actions],
          resources: [...s.resources],
          ...(s.conditions && { conditions: s.conditions }),
        }),
      );
    }
    // The settings a grant gives (GRANT_SETTINGS, which the functions check at their cold start).
    const values = {
      TABLE_NAME: table.tableName,
      RUNS_QUEUE_URL: queue.queueUrl,
      HEAVY_RUNS_QUEUE_URL: heavyQueue.queueUrl,
      NOTIFY_QUEUE_URL: notifyQueue.queueUrl,
      ARTIFACTS_BUCKET: bucket.bucketName,
      SCHEDULE_GROUP: scheduler.groupName,
      SCHEDULER_ROLE_ARN: scheduler.roleArn,
      SCHEDULE_TARGET_ARN: scheduler.targetArn,
      SCHEDULE_DLQ_ARN: scheduler.dlqArn,
    };
    for (const grant of grants) {
      if (!Object.hasOwn(GRANT_SETTINGS, grant)) continue;
      for (const setting of GRANT_SETTINGS[grant as Grant]) this.addEnvironment(setting, values[setting]);
      if (grant === 'secrets:encrypt' || grant === 'secrets:decrypt') this.addEnvironment('SECRETS_KEY_ID', secretsKey.keyArn);
      if (grant === 'email:send' && sesIdentity) this.addEnvironment('SES_IDENTITY', sesIdentity);
      if (grant === 'links:sign') this.addEnvironment('REVIEW_LINK_SECRET_ARN', reviewLinkSecret.secretArn);
    }
    return this;
  }
}
