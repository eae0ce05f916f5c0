import { CfnOutput, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { addApi, addCustomDomain } from './constructs/api.ts';
import { addAuditEvents } from './constructs/audit-events.ts';
import { Functions } from './constructs/functions.ts';
import { Observability } from './constructs/observability.ts';
import { Releases } from './constructs/releases.ts';
import { addSchedules } from './constructs/schedules.ts';
import { addSecrets } from './constructs/secrets.ts';
import { addStackWorkflows } from './constructs/code-workflows.ts';
import { acknowledgeDataWildcards, addStorage } from './constructs/storage.ts';
import { addQueueWorkers, addSweeps } from './constructs/workers.ts';
import { capacitySettings, type FlowgateStackProps, lambdaConcurrencyLimit, retentionSettings } from './settings.ts';

/**
 * The whole service: one table, the runs queues (main and heavy lanes) and the notifications queue, the artifacts bucket, the keys,
 * the HTTP API and its functions, the workers and sweeps, the schedules, the dashboard and alarms.
 * The parts (infra/constructs/) add their resources to this stack itself, not to constructs of their
 * own, so each resource keeps the logical id it has always had: a changed id replaces the resource.
 */
export class FlowgateStack extends Stack {
  readonly api: HttpApi;
  readonly table: dynamodb.Table;
  readonly queue: sqs.Queue;
  /** The heavy lane's runs queue (shared/engine/lanes.ts). */
  readonly heavyQueue: sqs.Queue;
  readonly notifyQueue: sqs.Queue;
  readonly runsDlq: sqs.IQueue;
  readonly heavyRunsDlq: sqs.IQueue;
  readonly notifyDlq: sqs.IQueue;
  readonly bucket: s3.Bucket;
  readonly accessLogsBucket: s3.Bucket;
  readonly observability: Observability;

  constructor(scope: Construct, id: string, props: FlowgateStackProps) {
    super(scope, id, props);
    const deletionProtection = props.deletionProtection ?? true;
    const removalPolicy = deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const { retentionDays, retryLimit, auditRetentionDays, succeededWebhookRetentionDays } = retentionSettings(props);

    const capacity = capacitySettings(props);
    const storage = addStorage(this, { deletionProtection, removalPolicy, retentionDays, capacity });
    this.table = storage.table;
    this.queue = storage.queue;
    this.heavyQueue = storage.heavyQueue;
    this.notifyQueue = storage.notifyQueue;
    this.runsDlq = storage.runsDlq;
    this.heavyRunsDlq = storage.heavyRunsDlq;
    this.notifyDlq = storage.notifyDlq;
    this.bucket = storage.bucket;
    this.accessLogsBucket = storage.accessLogsBucket;
    const { secretsKey, reviewLinkSecret, cursorSecret } = addSecrets(this, props);

    const customDomain = addCustomDomain(this, props);
    if (props.disableExecuteApiEndpoint && !customDomain) {
      throw new Error('disableExecuteApiEndpoint needs a custom domain (domainName and certificateArn): it would be the only way in');
    }
    // Resolved once the API exists (the fallback function is created before it). No cycle: the
    // functions reference the API's id, the API references no function (integrations and routes do).
    const publicBaseUrl =
      props.publicBaseUrl ?? (customDomain ? `https://${props.domainName}` : Lazy.string({ produce: () => this.api.apiEndpoint }));
    const functions = new Functions(this, props, {
      publicBaseUrl,
      retentionDays,
      succeededWebhookRetentionDays,
      retryLimit,
      auditRetentionDays,
      removalPolicy,
    });

    const { fire, schedules, resources } = addSchedules(this, {
      functions,
      removalPolicy,
      asyncFailures: storage.asyncFailures,
      resources: {
        table: this.table,
        queue: this.queue,
        heavyQueue: this.heavyQueue,
        notifyQueue: this.notifyQueue,
        bucket: this.bucket,
        secretsKey,
        ...(props.sesIdentity ? { sesIdentity: props.sesIdentity } : {}),
        reviewLinkSecret,
      },
    });
    // The canaries of the trigger and the queue workers (their aliases and deployment groups).
    const releases = new Releases(this, { rollbackAlarms: props.rollbackAlarms });
    const { api, fallback, accessLogs } = addApi(this, {
      props,
      functions,
      resources,
      cursorSecret,
      customDomain,
      removalPolicy,
      releases,
    });
    this.api = api;
    const { runsWorker, notifyWorker } = addQueueWorkers({ props, functions, resources, releases });
    functions.group('Fallback', fallback);
    const { auditWorker, auditDlq } = addAuditEvents(this, { props, functions, resources });
    const { sweep } = addSweeps(this, { props, functions, resources, table: this.table, asyncFailures: storage.asyncFailures, releases });
    acknowledgeDataWildcards(this, this.bucket);
    addStackWorkflows(this, { props, functions, resources });

    if (props.stage === 'prod' && !props.alarmEmail && !props.alarmTopicArn && !props.waiveAlarmDestination) {
      throw new Error(
        'stage prod needs an alarm destination: alarmEmail or alarmTopicArn (or waiveAlarmDestination=true to deploy without one)',
      );
    }
    this.observability = new Observability(this, 'Observability', {
      name: this.stackName,
      api: this.api,
      groups: functions.dashboardGroups(),
      runsWorker,
      notifyWorker,
      scheduledSweep: sweep,
      queues: {
        runs: this.queue,
        runsDlq: this.runsDlq,
        heavyRuns: this.heavyQueue,
        heavyRunsDlq: this.heavyRunsDlq,
        notifications: this.notifyQueue,
        notificationsDlq: this.notifyDlq,
      },
      schedules: { fire, dlq: schedules.dlq },
      asyncFailures: storage.asyncFailures,
      auditEvents: { worker: auditWorker, dlq: auditDlq },
      table: this.table,
      apiAccessLogs: accessLogs,
      lambdaConcurrencyLimit: lambdaConcurrencyLimit(props),
      alarmEmail: props.alarmEmail,
      alarmTopicArn: props.alarmTopicArn,
    });
    releases.rollBackOn(this.observability.alarms);

    // With the execute-api endpoint off, the custom domain is the API's only address.
    new CfnOutput(this, 'ApiUrl', { value: props.disableExecuteApiEndpoint ? `https://${props.domainName}` : this.api.apiEndpoint });
    new CfnOutput(this, 'PublicBaseUrl', { value: publicBaseUrl });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'RunsQueueUrl', { value: this.queue.queueUrl });
    new CfnOutput(this, 'HeavyRunsQueueUrl', { value: this.heavyQueue.queueUrl });
    new CfnOutput(this, 'NotificationsQueueUrl', { value: this.notifyQueue.queueUrl });
    new CfnOutput(this, 'RunsDlqUrl', { value: this.runsDlq.queueUrl });
    new CfnOutput(this, 'HeavyRunsDlqUrl', { value: this.heavyRunsDlq.queueUrl });
    new CfnOutput(this, 'NotificationsDlqUrl', { value: this.notifyDlq.queueUrl });
    new CfnOutput(this, 'AsyncFailuresQueueUrl', { value: storage.asyncFailures.queueUrl });
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
}
