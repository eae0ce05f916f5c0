import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { CfnStage, HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { routes } from '../functions/routes.ts';
import { ARTIFACTS_BUCKET, NOTIFY_QUEUE, RUNS_QUEUE, TABLE, WORKER_TIMEOUT_SECONDS } from '../shared/db/table.ts';
import type { Grant, Route } from '../shared/http/route.ts';
import { type Bindable, RouteFunction } from './constructs/route-function.ts';

export type FlowgateStackProps = StackProps & {
  stage: string;
  /** Table deletion protection and RETAIN of stateful resources; default true. */
  deletionProtection?: boolean;
  /** JSON like `{"pro": 20}`, passed to every function as RATE_LIMITS. */
  rateLimits?: string;
  /** Comma-separated CIDRs whose X-Forwarded-For is trusted (TRUSTED_PROXIES). */
  trustedProxies?: string;
  publicBaseUrl?: string;
  /** Comma-separated hosts or CIDRs http_request steps may call despite the private-address rule (HTTP_STEP_ALLOWLIST). */
  httpStepAllowlist?: string;
  /** Per-function reserved concurrency; default none (the account pool). */
  reservedConcurrency?: number;
  /** Default-stage throttling of the HTTP API. */
  throttle?: { rateLimit?: number; burstLimit?: number };
};

const WORKER_GRANTS: readonly Grant[] = ['table:read', 'table:write', 'queue:send', 'bucket:read', 'bucket:write'];

/** `http/keys/revoke` → `HttpKeysRevoke`: a stable construct id per handler module. */
const idOf = (handler: string) =>
  handler
    .split(/[^A-Za-z0-9]+/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/**
 * Only fields that cannot carry a secret: the route key and path, never the query string (API keys
 * may arrive as `api_key`) nor any header.
 */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  routeKey: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
});

/** The whole service: one table, the runs queue, the artifacts bucket, the HTTP API and its functions. */
export class FlowgateStack extends Stack {
  readonly api: HttpApi;
  readonly table: dynamodb.Table;
  readonly queue: sqs.Queue;
  readonly notifyQueue: sqs.Queue;
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: FlowgateStackProps) {
    super(scope, id, props);
    const deletionProtection = props.deletionProtection ?? true;
    const removalPolicy = deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: TABLE.ttlAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection,
      removalPolicy,
    });
    for (const ix of TABLE.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: ix.name,
        partitionKey: { name: ix.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: ix.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    const queueWithDlq = (q: typeof RUNS_QUEUE | typeof NOTIFY_QUEUE) => {
      const dlq = new sqs.Queue(this, idOf(q.dlqName), {
        queueName: `${this.stackName}-${q.dlqName}`,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      return new sqs.Queue(this, idOf(q.name), {
        queueName: `${this.stackName}-${q.name}`,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        // AWS's advice for Lambda consumers: at least six times the function timeout.
        visibilityTimeout: Duration.seconds(Math.max(q.visibilityTimeoutSeconds, 6 * WORKER_TIMEOUT_SECONDS)),
        deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
      });
    };
    this.queue = queueWithDlq(RUNS_QUEUE);
    this.notifyQueue = queueWithDlq(NOTIFY_QUEUE);

    this.bucket = new s3.Bucket(this, idOf(ARTIFACTS_BUCKET.name), {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      lifecycleRules: [{ abortIncompleteMultipartUploadAfter: Duration.days(1), noncurrentVersionExpiration: Duration.days(7) }],
      // Emptying the bucket on delete would need a custom-resource Lambda; a non-empty bucket is kept.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const resources: Bindable = { table: this.table, queue: this.queue, notifyQueue: this.notifyQueue, bucket: this.bucket };
    // Signs list cursors; the same value must reach every function. Resolved by CloudFormation at
    // deploy time (a dynamic reference), so the template never holds it.
    const cursorSecret = new secretsmanager.Secret(this, 'CursorSecret', {
      description: 'Signs the opaque list cursors of the v1 API',
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    const environment: Record<string, string> = {
      CURSOR_SECRET: cursorSecret.secretValue.unsafeUnwrap(),
      POWERTOOLS_SERVICE_NAME: 'flowgate',
      TRUSTED_PROXIES: props.trustedProxies ?? '',
      ...(props.rateLimits && { RATE_LIMITS: props.rateLimits }),
      ...(props.publicBaseUrl && { PUBLIC_BASE_URL: props.publicBaseUrl }),
      ...(props.httpStepAllowlist && { HTTP_STEP_ALLOWLIST: props.httpStepAllowlist }),
    };
    const fn = (handler: string, settings: { memoryMb?: number; timeoutSeconds?: number } = {}) =>
      new RouteFunction(this, idOf(handler), {
        handler,
        ...settings,
        environment,
        logRemovalPolicy: removalPolicy,
        ...(props.reservedConcurrency !== undefined && { reservedConcurrency: props.reservedConcurrency }),
      });

    const fallback = fn('http/fallback');
    this.api = new HttpApi(this, 'Api', {
      apiName: `flowgate-${props.stage}`,
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });
    for (const route of routes as readonly Route[]) {
      const settings = { memoryMb: route.memoryMb, timeoutSeconds: route.timeoutSeconds };
      const handler = fn(route.handler, settings).bind(resources, route.grants);
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${idOf(route.handler)}Integration`, handler),
      });
    }
    this.configureDefaultStage(props, removalPolicy);

    const consume = (handler: string, source: sqs.Queue) => {
      const worker = fn(handler, { timeoutSeconds: WORKER_TIMEOUT_SECONDS }).bind(resources, WORKER_GRANTS);
      worker.addEventSource(
        new SqsEventSource(source, { batchSize: 10, maxBatchingWindow: Duration.seconds(1), reportBatchItemFailures: true }),
      );
      return worker;
    };
    consume('worker/execute', this.queue);
    // The notifications worker pushes back a failed delivery's visibility (its backoff).
    this.notifyQueue.grant(consume('worker/notify', this.notifyQueue), 'sqs:ChangeMessageVisibility');

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'RunsQueueUrl', { value: this.queue.queueUrl });
    new CfnOutput(this, 'ArtifactsBucket', { value: this.bucket.bucketName });
  }

  /** Throttling and access logs; the L2 HttpApi exposes neither for the stage it creates itself. */
  private configureDefaultStage(props: FlowgateStackProps, removalPolicy: RemovalPolicy) {
    const stage = this.api.defaultStage?.node.defaultChild;
    if (!(stage instanceof CfnStage)) throw new Error('HttpApi has no default stage');
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy,
    });
    stage.accessLogSettings = { destinationArn: accessLogs.logGroupArn, format: ACCESS_LOG_FORMAT };
    stage.defaultRouteSettings = {
      throttlingRateLimit: props.throttle?.rateLimit ?? 500,
      throttlingBurstLimit: props.throttle?.burstLimit ?? 1000,
    };
  }
}
