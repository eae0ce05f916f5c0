import { type CfnElement, CfnOutput, Duration, Lazy, RemovalPolicy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { ApiMapping, CfnStage, DomainName, HttpApi, HttpMethod, SecurityPolicy } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import type { Construct } from 'constructs';
import { releaseDigest } from './release.ts';
import { routes } from '../functions/routes.ts';
import { ARTIFACTS_BUCKET, NOTIFY_QUEUE, RUNS_QUEUE, TABLE, WORKER_TIMEOUT_SECONDS } from '../shared/db/table.ts';
import type { Grant, Route } from '../shared/http/route.ts';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '../shared/metric-names.ts';
import { type FunctionGroup, Observability } from './constructs/observability.ts';
import { type Bindable, RouteFunction } from './constructs/route-function.ts';

export type FlowgateStackProps = StackProps & {
  stage: string;
  /** Table deletion protection and RETAIN of stateful resources; default true. */
  deletionProtection?: boolean;
  /** JSON like `{"pro": 20}`, passed to every function as RATE_LIMITS. */
  rateLimits?: string;
  /** Comma-separated CIDRs whose X-Forwarded-For is trusted (TRUSTED_PROXIES). */
  trustedProxies?: string;
  /** Base of the links the service builds (PUBLIC_BASE_URL); default the custom domain, else the API endpoint. */
  publicBaseUrl?: string;
  /** Comma-separated hosts or CIDRs http_request steps may call despite the private-address rule (HTTP_STEP_ALLOWLIST). */
  httpStepAllowlist?: string;
  /** Per-function reserved concurrency; default none (the account pool). */
  reservedConcurrency?: number;
  /** Default-stage throttling of the HTTP API. */
  throttle?: { rateLimit?: number; burstLimit?: number };
  /**
   * Custom domain (`api.example.com`) with an ACM certificate ARN of the same region; both or neither.
   * Point a CNAME (or Route 53 alias) at the `CustomDomainTarget` output.
   */
  domainName?: string;
  certificateArn?: string;
  /** Subscribe this address to the alarm topic (created unless `alarmTopicArn` is given). */
  alarmEmail?: string;
  /** Send every alarm (and its recovery) to this existing SNS topic. */
  alarmTopicArn?: string;
  // No `webAclArn`: AWS WAF cannot be associated with an HTTP API (only REST API stages, CloudFront,
  // ALB, AppSync, ...), so a CfnWebACLAssociation on this stage fails at deploy. The way to put WAF in
  // front is a CloudFront distribution with the web ACL whose origin is the API (README, "Deploying").
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
  readonly runsDlq: sqs.IQueue;
  readonly notifyDlq: sqs.IQueue;
  readonly bucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;
  readonly observability: Observability;

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
    const dlqOf = (q: sqs.Queue) => {
      if (!q.deadLetterQueue) throw new Error(`${q.node.id} has no dead-letter queue`);
      return q.deadLetterQueue.queue;
    };
    this.runsDlq = dlqOf(this.queue);
    this.notifyDlq = dlqOf(this.notifyQueue);

    // Server access logs of the artifacts bucket: who downloaded which artifact through a presigned URL.
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      // Log delivery supports SSE-S3 only on the target bucket.
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.accessLogsBucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This bucket is the server-access-log destination of the artifacts bucket; logging it would log the log delivery itself',
    });
    this.bucket = new s3.Bucket(this, idOf(ARTIFACTS_BUCKET.name), {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      versioned: false,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'artifacts/',
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
    Validations.of(cursorSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The cursor-signing key reaches the functions at deploy time (a dynamic reference), so a rotation would not reach them, and rotating it only invalidates the list cursors in flight',
    });

    const customDomain = this.customDomain(props);
    // Resolved once the API exists (the fallback function is created before it). No cycle: the
    // functions reference the API's id, the API references no function (integrations and routes do).
    const publicBaseUrl =
      props.publicBaseUrl ?? (customDomain ? `https://${props.domainName}` : Lazy.string({ produce: () => this.api.apiEndpoint }));
    const environment: Record<string, string> = {
      CURSOR_SECRET: cursorSecret.secretValue.unsafeUnwrap(),
      POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
      // Powertools Metrics' default namespace: the one the dashboard reads.
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      TRUSTED_PROXIES: props.trustedProxies ?? '',
      PUBLIC_BASE_URL: publicBaseUrl,
      ...(props.rateLimits && { RATE_LIMITS: props.rateLimits }),
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
    /** The dashboard's function groups: the route table's tags, then the workers and the fallback. */
    const groups = new Map<string, IFunction[]>();
    const inGroup = (name: string, f: IFunction) => groups.set(name, [...(groups.get(name) ?? []), f]);

    const fallback = fn('http/fallback');
    this.api = new HttpApi(this, 'Api', {
      apiName: `flowgate-${props.stage}`,
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authorization is done in the functions: API keys, sessions and HMAC (per-route auth in the route table); health, OpenAPI and login are public by design',
    });
    for (const route of routes as readonly Route[]) {
      const settings = { memoryMb: route.memoryMb, timeoutSeconds: route.timeoutSeconds };
      const handler = fn(route.handler, settings).bind(resources, route.grants);
      inGroup(route.tag, handler);
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${idOf(route.handler)}Integration`, handler),
      });
    }
    this.configureDefaultStage(props, removalPolicy);
    if (customDomain) new ApiMapping(this, 'ApiMapping', { api: this.api, domainName: customDomain });

    const consume = (handler: string, source: sqs.Queue) => {
      const worker = fn(handler, { timeoutSeconds: WORKER_TIMEOUT_SECONDS }).bind(resources, WORKER_GRANTS);
      worker.addEventSource(
        new SqsEventSource(source, { batchSize: 10, maxBatchingWindow: Duration.seconds(1), reportBatchItemFailures: true }),
      );
      return worker;
    };
    const runsWorker = consume('worker/execute', this.queue);
    inGroup('Runs worker', runsWorker);
    const notifyWorker = consume('worker/notify', this.notifyQueue);
    inGroup('Notifications worker', notifyWorker);
    // The notifications worker pushes back a failed delivery's visibility (its backoff).
    this.notifyQueue.grant(notifyWorker, 'sqs:ChangeMessageVisibility');
    inGroup('Fallback', fallback);
    // The sweeps move runs, so they write the table and emit events (the notifications queue); the
    // crash sweep also queues runs it resumes.
    const sweepGrants: Grant[] = ['table:read', 'table:write', 'queue:send'];
    // The scheduled sweep: approval deadlines and crashed runs, every minute.
    const sweep = fn('sweep/scheduled', { timeoutSeconds: 60 }).bind(resources, sweepGrants);
    new events.Rule(this, 'ScheduledSweep', {
      description: 'Runs the scheduled sweep every minute',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      targets: [new eventTargets.LambdaFunction(sweep)],
    });
    inGroup('Sweep', sweep);
    // The startup sweep: a deployment that changes the service is its restart (ARCHITECTURE.md), so
    // the trigger runs once every function of the release is in place. It re-runs when its handler
    // version changes; RELEASE (a digest of the code and settings) changes that on every release.
    const startup = fn('sweep/startup', { timeoutSeconds: 300 }).bind(resources, sweepGrants);
    startup.addEnvironment('RELEASE', releaseDigest(this.resolve(environment)));
    inGroup('Sweep', startup);
    new triggers.Trigger(this, 'StartupSweep', {
      handler: startup,
      timeout: Duration.minutes(5),
      executeAfter: [this.table, ...[...groups.values()].flat().filter((f) => f !== startup)],
    });
    this.acknowledgeDataWildcards();

    this.observability = new Observability(this, 'Observability', {
      name: this.stackName,
      api: this.api,
      groups: [...groups].map(([name, functions]): FunctionGroup => ({ name, functions })),
      runsWorker,
      queues: { runs: this.queue, runsDlq: this.runsDlq, notifications: this.notifyQueue, notificationsDlq: this.notifyDlq },
      table: this.table,
      alarmEmail: props.alarmEmail,
      alarmTopicArn: props.alarmTopicArn,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'PublicBaseUrl', { value: publicBaseUrl });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'RunsQueueUrl', { value: this.queue.queueUrl });
    new CfnOutput(this, 'NotificationsQueueUrl', { value: this.notifyQueue.queueUrl });
    new CfnOutput(this, 'RunsDlqUrl', { value: this.runsDlq.queueUrl });
    new CfnOutput(this, 'NotificationsDlqUrl', { value: this.notifyDlq.queueUrl });
    new CfnOutput(this, 'ArtifactsBucket', { value: this.bucket.bucketName });
    new CfnOutput(this, 'AccessLogsBucket', { value: this.accessLogsBucket.bucketName });
    const dashboard = this.observability.dashboard.dashboardName;
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards/dashboard/${dashboard}`,
    });
    if (this.observability.alarmTopic) new CfnOutput(this, 'AlarmTopicArn', { value: this.observability.alarmTopic.topicArn });
    if (customDomain) {
      new CfnOutput(this, 'CustomDomainTarget', {
        description: `CNAME (or Route 53 alias) target for ${props.domainName}`,
        value: customDomain.regionalDomainName,
      });
      new CfnOutput(this, 'CustomDomainHostedZoneId', {
        description: 'Hosted zone id for a Route 53 alias record',
        value: customDomain.regionalHostedZoneId,
      });
    }
  }

  private customDomain(props: FlowgateStackProps): DomainName | undefined {
    if (!props.domainName && !props.certificateArn) return undefined;
    if (!props.domainName || !props.certificateArn) throw new Error('domainName and certificateArn go together');
    return new DomainName(this, 'Domain', {
      domainName: props.domainName,
      certificate: Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
  }

  /**
   * cdk-nag findings that name one resource of this stack: the table's indexes (Query on a GSI) and
   * the artifact objects (keys are account/execution/artifact, made at run time). Acknowledged for
   * these two resource patterns only, so a wildcard on anything else is still reported.
   */
  private acknowledgeDataWildcards() {
    const ref = (c: { node: { defaultChild?: unknown } }) => this.getLogicalId(c.node.defaultChild as CfnElement);
    Validations.of(this).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${ref(this.table)}.Arn>/index/*]`,
        reason: "Queries on this table's own secondary indexes (TABLE.indexes); the grant names the table, the wildcard is the index name",
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${ref(this.bucket)}.Arn>/*]`,
        reason:
          'Object keys of the artifacts bucket are account/execution/artifact ids made at run time; only s3:GetObject or s3:PutObject on this one bucket',
      },
    );
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
