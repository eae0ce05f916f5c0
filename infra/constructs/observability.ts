import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type AppMetricName, METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';

// Re-exported so the whole contract of the dashboard is importable from here; functions should import
// `./metric-names.ts` itself, which keeps aws-cdk-lib out of their bundles.
export { APP_METRICS, type AppMetricName, METRIC, METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';

/** Functions shown as one line on the Lambda graphs: a route-table tag, a queue worker, the fallback. */
export type FunctionGroup = { name: string; functions: readonly IFunction[] };

export type ObservabilityProps = {
  /** Prefix of the dashboard and alarm names (the stack name). */
  name: string;
  api: IHttpApi;
  groups: readonly FunctionGroup[];
  /** `worker/execute`: its errors alarm. */
  runsWorker: IFunction;
  /** `worker/notify`: its errors alarm. */
  notifyWorker: IFunction;
  /** `sweep/scheduled`: its errors and not-running alarms. */
  scheduledSweep: IFunction;
  queues: { runs: IQueue; runsDlq: IQueue; notifications: IQueue; notificationsDlq: IQueue };
  /** The schedules: the `schedule-fire` function (its errors alarm) and the scheduler's DLQ (its alarm). */
  schedules: { fire: IFunction; dlq: IQueue };
  table: dynamodb.ITable;
  /** Subscribe this address to the alarm topic (created unless `alarmTopicArn` is given). */
  alarmEmail?: string;
  /** Send alarms to this existing topic. */
  alarmTopicArn?: string;
  /** Below this many requests in 5 minutes the 5xx-rate alarm stays OK, so one error at night is no page. */
  min5xxRequests?: number;
};

const FIVE_MINUTES = Duration.minutes(5);
const ONE_MINUTE = Duration.minutes(1);

/**
 * The table operations the code issues (shared/db, shared/domain, shared/engine). DynamoDB reports
 * throttles and system errors per operation, and an alarm may combine at most 10 metrics.
 */
const TABLE_OPERATIONS = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.BATCH_GET_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.TRANSACT_WRITE_ITEMS,
];

/** Lambda's throttles over every function of the account in this region (no per-stack aggregate exists). */
const accountThrottles = () =>
  new cw.Metric({
    namespace: 'AWS/Lambda',
    metricName: 'Throttles',
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
    label: 'throttles (account)',
  });

/** What the alarms watch, so the README and the tests name the same things. */
export const ALARMS = {
  runsDlq: 'runs-dlq-not-empty',
  notificationsDlq: 'notifications-dlq-not-empty',
  api5xxRate: 'api-5xx-rate',
  runsWorkerErrors: 'runs-worker-errors',
  runsQueueAge: 'runs-queue-oldest-message-age',
  notifyWorkerErrors: 'notifications-worker-errors',
  notificationsQueueAge: 'notifications-queue-oldest-message-age',
  sweepErrors: 'scheduled-sweep-errors',
  sweepNotRunning: 'scheduled-sweep-not-running',
  lambdaThrottles: 'lambda-throttles',
  dynamoThrottles: 'dynamodb-throttled-requests',
  dynamoSystemErrors: 'dynamodb-system-errors',
  deliveryFailures: 'delivery-failures',
  scheduleFireErrors: 'schedule-fire-errors',
  schedulerDlq: 'scheduler-dlq-not-empty',
} as const;
export type AlarmKey = keyof typeof ALARMS;

/** The 5xx share of requests in percent, 0 below `min` requests (metric math, used by graph and alarm). */
function serverErrorRate(api: IHttpApi, min: number) {
  return new cw.MathExpression({
    expression: `IF(requests >= ${min}, 100 * FILL(errors, 0) / requests, 0)`,
    usingMetrics: {
      requests: api.metricCount({ period: FIVE_MINUTES, statistic: cw.Stats.SUM }),
      errors: api.metricServerError({ period: FIVE_MINUTES, statistic: cw.Stats.SUM }),
    },
    label: `5xx % of requests (0 below ${min} requests)`,
    period: FIVE_MINUTES,
  });
}

/**
 * The CloudWatch dashboard and the alarms of the service, and the optional SNS topic the alarms
 * notify. Every alarm treats missing data as OK (an idle service has no datapoints), but the one
 * for the scheduled sweep not running, whose failure is the missing data.
 */
export class Observability extends Construct {
  readonly dashboard: cw.Dashboard;
  readonly alarms: Record<AlarmKey, cw.Alarm>;
  readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: ObservabilityProps) {
    super(scope, id);
    const { api, queues, table } = props;
    const min5xx = props.min5xxRequests ?? 100;

    this.alarmTopic = this.topic(props);
    const alarm = (
      key: AlarmKey,
      description: string,
      metric: cw.IMetric,
      options: Omit<cw.CreateAlarmOptions, 'alarmName' | 'alarmDescription'>,
    ) => {
      const a = new cw.Alarm(this, `${key.charAt(0).toUpperCase()}${key.slice(1)}Alarm`, {
        metric,
        alarmName: `${props.name}-${ALARMS[key]}`,
        alarmDescription: `${description} See README "Operating".`,
        treatMissingData: cw.TreatMissingData.NOT_BREACHING,
        ...options,
      });
      if (this.alarmTopic) {
        a.addAlarmAction(new SnsAction(this.alarmTopic));
        a.addOkAction(new SnsAction(this.alarmTopic));
      }
      return a;
    };
    const dlqAlarm = (key: AlarmKey, dlq: IQueue, what: string) =>
      alarm(
        key,
        `${what} gave up on messages (the dead-letter queue is not empty). Inspect them in the SQS console, fix the cause, then redrive or purge.`,
        dlq.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: cw.Stats.MAXIMUM }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
      );
    /** Deliveries of the delivery log that FAILED for good (shared/engine/senders.ts), per 5 minutes. */
    const deliveriesFailed = new cw.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'DeliveryFailed',
      dimensionsMap: { service: METRICS_SERVICE },
      statistic: cw.Stats.SUM,
      period: FIVE_MINUTES,
      label: 'deliveries failed for good',
    });
    this.alarms = {
      runsDlq: dlqAlarm('runsDlq', queues.runsDlq, 'The runs worker'),
      notificationsDlq: dlqAlarm('notificationsDlq', queues.notificationsDlq, 'The notifications worker'),
      api5xxRate: alarm(
        'api5xxRate',
        `More than 1% of HTTP API requests answered 5xx over 5 minutes (with at least ${min5xx} requests). Look at the Lambda errors by group on the dashboard and the failing function's logs.`,
        serverErrorRate(api, min5xx),
        { threshold: 1, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
      ),
      runsWorkerErrors: alarm(
        'runsWorkerErrors',
        'The runs worker (worker/execute) failed invocations in 3 of the last 5 minutes: runs are not progressing. Read its log group.',
        props.runsWorker.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
        {
          threshold: 0,
          comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 5,
          datapointsToAlarm: 3,
        },
      ),
      runsQueueAge: alarm(
        'runsQueueAge',
        'A message has waited on the runs queue for more than 5 minutes: the worker is failing, throttled or not consuming.',
        queues.runs.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM }),
        { threshold: 300, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
      ),
      notifyWorkerErrors: alarm(
        'notifyWorkerErrors',
        'The notifications worker (worker/notify) failed invocations in 3 of the last 5 minutes (a refused delivery is no failed invocation): events are not going out. Read its log group.',
        props.notifyWorker.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
      ),
      notificationsQueueAge: alarm(
        'notificationsQueueAge',
        'A message has waited on the notifications queue for more than 15 minutes (longer than the first retries of a failing delivery): the worker is failing, throttled or not consuming.',
        queues.notifications.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM }),
        { threshold: 900, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
      ),
      sweepErrors: alarm(
        'sweepErrors',
        'The scheduled sweep (sweep/scheduled) failed in 3 of the last 5 minutes: approvals stop expiring and crashed runs are not found. Read its log group.',
        props.scheduledSweep.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
      ),
      sweepNotRunning: alarm(
        'sweepNotRunning',
        'The scheduled sweep has not been invoked for 10 minutes (it runs every minute): check its EventBridge rule (enabled?), the function (throttled?) and its reserved concurrency.',
        props.scheduledSweep.metricInvocations({ period: FIVE_MINUTES, statistic: cw.Stats.SUM }),
        {
          threshold: 1,
          comparisonOperator: cw.ComparisonOperator.LESS_THAN_THRESHOLD,
          evaluationPeriods: 2,
          // No datapoint is the failure this alarm is for.
          treatMissingData: cw.TreatMissingData.BREACHING,
        },
      ),
      lambdaThrottles: alarm(
        'lambdaThrottles',
        "Lambda throttled invocations in this account and region in 2 of the last 3 five-minute periods: the account's concurrency is used up, or a function hit its reserved concurrency. API requests get 429/5xx; queued work waits.",
        accountThrottles(),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 3, datapointsToAlarm: 2 },
      ),
      dynamoThrottles: alarm(
        'dynamoThrottles',
        'DynamoDB throttled requests on the table in 2 of the last 3 five-minute periods: a hot partition or a jump past twice the previous peak (on-demand).',
        table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 3, datapointsToAlarm: 2 },
      ),
      dynamoSystemErrors: alarm(
        'dynamoSystemErrors',
        "DynamoDB answered the table's requests with internal errors (HTTP 500) in 2 of the last 3 five-minute periods; the SDK retries them, so this is an AWS-side problem: check the AWS Health Dashboard.",
        table.metricSystemErrorsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 3, datapointsToAlarm: 2 },
      ),
      deliveryFailures: alarm(
        'deliveryFailures',
        'Outgoing messages (event notifications, approval messages) failed for good: their 5 attempts over an hour are spent, or no retry could fix them. The delivery log (GET /api/v1/executions/{id}/deliveries) shows each attempt; fix the receiver, then redeliver (POST /api/deliveries/{id}/redeliver).',
        deliveriesFailed,
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
      ),
      scheduleFireErrors: alarm(
        'scheduleFireErrors',
        'The schedule-fire function (schedule/fire) failed invocations in 3 of the last 5 minutes: EventBridge Scheduler retries them for an hour, then dead-letters them; schedules are not starting runs. Read its log group.',
        props.schedules.fire.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
        { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
      ),
      schedulerDlq: dlqAlarm('schedulerDlq', props.schedules.dlq, 'EventBridge Scheduler'),
    };

    const region = Stack.of(this).region;
    this.dashboard = new cw.Dashboard(this, 'Dashboard', {
      dashboardName: `${props.name}-${region}`,
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new cw.TextWidget({
        markdown: `# Flowgate ${props.name}\nHTTP API, functions by route group, queues, table and the service's own metrics (namespace \`${METRICS_NAMESPACE}\`). See README "Operating".`,
        width: 12,
        height: 3,
      }),
      new cw.AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(this.alarms), width: 12, height: 3 }),
    );
    this.dashboard.addWidgets(...this.apiWidgets(api, min5xx));
    this.dashboard.addWidgets(...this.lambdaWidgets(props.groups));
    this.dashboard.addWidgets(...this.queueWidgets(queues));
    // Each alarm's own metric, with its threshold: the table's, the sweep's and the account's throttles
    // are shown nowhere else.
    this.dashboard.addWidgets(
      ...(Object.entries(this.alarms) as [AlarmKey, cw.Alarm][]).map(
        ([key, a]) => new cw.AlarmWidget({ title: ALARMS[key], alarm: a, width: 6, height: 5 }),
      ),
    );
    this.dashboard.addWidgets(...this.appWidgets());
  }

  private topic(props: ObservabilityProps): sns.ITopic | undefined {
    let topic: sns.ITopic | undefined;
    if (props.alarmTopicArn) {
      topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);
    } else if (props.alarmEmail) {
      const created = new sns.Topic(this, 'AlarmTopic', { displayName: `Flowgate alarms (${props.name})`, enforceSSL: true });
      // CloudWatch can publish to an encrypted topic only with a customer managed key whose policy
      // admits it (not the AWS managed alias/aws/sns key); alarm messages name a metric and a state.
      Validations.of(created).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'Alarm notifications carry only alarm names, metrics and states; encrypting would need a customer managed KMS key that CloudWatch may use',
      });
      topic = created;
    }
    if (topic && props.alarmEmail) topic.addSubscription(new EmailSubscription(props.alarmEmail));
    return topic;
  }

  private apiWidgets(api: IHttpApi, min5xx: number): cw.IWidget[] {
    return [
      new cw.GraphWidget({
        title: 'HTTP API latency (ms)',
        left: [
          api.metricLatency({ period: FIVE_MINUTES, statistic: cw.Stats.p(50), label: 'p50' }),
          api.metricLatency({ period: FIVE_MINUTES, statistic: cw.Stats.p(99), label: 'p99' }),
        ],
        width: 8,
      }),
      new cw.GraphWidget({
        title: 'HTTP API requests, 4xx and 5xx (per 5 min)',
        left: [api.metricCount({ period: FIVE_MINUTES, statistic: cw.Stats.SUM, label: 'requests' })],
        right: [
          api.metricClientError({ period: FIVE_MINUTES, statistic: cw.Stats.SUM, label: '4xx' }),
          api.metricServerError({ period: FIVE_MINUTES, statistic: cw.Stats.SUM, label: '5xx' }),
        ],
        width: 8,
      }),
      new cw.GraphWidget({
        title: 'HTTP API 5xx rate (%)',
        left: [serverErrorRate(api, min5xx)],
        leftAnnotations: [{ value: 1, label: 'alarm', color: cw.Color.RED }],
        width: 8,
      }),
    ];
  }

  /** One line per group: errors and throttles summed over its functions, duration as its worst p99. */
  private lambdaWidgets(groups: readonly FunctionGroup[]): cw.IWidget[] {
    const perGroup = (fn: string, metric: (f: IFunction) => cw.Metric, label: (g: FunctionGroup) => string, id: string): cw.IMetric[] =>
      groups.map((g, gi) => {
        const using = Object.fromEntries(g.functions.map((f, fi) => [`${id}${gi}f${fi}`, metric(f)]));
        return new cw.MathExpression({
          expression: `${fn}([${Object.keys(using).join(',')}])`,
          usingMetrics: using,
          label: label(g),
          period: FIVE_MINUTES,
        });
      });
    return [
      new cw.GraphWidget({
        title: 'Lambda errors by group (sum)',
        left: perGroup(
          'SUM',
          (f) => f.metricErrors({ period: FIVE_MINUTES, statistic: cw.Stats.SUM }),
          (g) => g.name,
          'e',
        ),
        width: 8,
        height: 8,
      }),
      new cw.GraphWidget({
        title: 'Lambda throttles by group (sum)',
        left: perGroup(
          'SUM',
          (f) => f.metricThrottles({ period: FIVE_MINUTES, statistic: cw.Stats.SUM }),
          (g) => g.name,
          't',
        ),
        width: 8,
        height: 8,
      }),
      new cw.GraphWidget({
        title: 'Lambda duration p99 by group (worst function, ms)',
        left: perGroup(
          'MAX',
          (f) => f.metricDuration({ period: FIVE_MINUTES, statistic: cw.Stats.p(99) }),
          (g) => g.name,
          'd',
        ),
        width: 8,
        height: 8,
      }),
    ];
  }

  private queueWidgets(queues: ObservabilityProps['queues']): cw.IWidget[] {
    const max = { period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM };
    return [
      new cw.GraphWidget({
        title: 'Queue depth (visible messages)',
        left: [
          queues.runs.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs' }),
          queues.notifications.metricApproximateNumberOfMessagesVisible({ ...max, label: 'notifications' }),
        ],
        width: 8,
      }),
      new cw.GraphWidget({
        title: 'Age of oldest message (s)',
        left: [
          queues.runs.metricApproximateAgeOfOldestMessage({ ...max, label: 'runs' }),
          queues.notifications.metricApproximateAgeOfOldestMessage({ ...max, label: 'notifications' }),
        ],
        leftAnnotations: [{ value: 300, label: 'runs alarm', color: cw.Color.RED }],
        width: 8,
      }),
      new cw.GraphWidget({
        title: 'Dead-letter queues (visible messages)',
        left: [
          queues.runsDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs DLQ' }),
          queues.notificationsDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'notifications DLQ' }),
        ],
        width: 8,
      }),
    ];
  }

  /** The service's own EMF metrics (APP_METRICS), all with `service=flowgate`. */
  private appWidgets(): cw.IWidget[] {
    const app = (name: AppMetricName, statistic: string = cw.Stats.SUM, label: string = name) => {
      return new cw.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { service: METRICS_SERVICE },
        statistic,
        period: FIVE_MINUTES,
        label,
      });
    };
    const rejectedByCode = new cw.MathExpression({
      // One line per `code` value seen, whatever the codes are.
      expression: `SEARCH('{${METRICS_NAMESPACE},code,service} MetricName="TriggerRejected" service="${METRICS_SERVICE}"', 'Sum', 300)`,
      usingMetrics: {},
      // A CloudWatch dynamic label (not a JS template): each line is named by its code.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: CloudWatch's own placeholder syntax
      label: "${PROP('Dim.code')}",
      period: FIVE_MINUTES,
    });
    const graph = (title: string, left: cw.IMetric[]) => new cw.GraphWidget({ title, left, width: 8 });
    return [
      graph('Webhook triggers', [
        app('TriggerAccepted', cw.Stats.SUM, 'accepted'),
        app('OpenWebhookTriggered', cw.Stats.SUM, 'accepted by open webhooks (no key, no signature)'),
        app('RateLimited', cw.Stats.SUM, '429 rate limited'),
        app('AuthFailureLimited', cw.Stats.SUM, '429 auth failures'),
      ]),
      graph('Trigger rejections by code', [rejectedByCode]),
      graph('Executions', [
        app('ExecutionStarted', cw.Stats.SUM, 'started'),
        app('ExecutionSucceeded', cw.Stats.SUM, 'succeeded'),
        app('ExecutionFailed', cw.Stats.SUM, 'failed'),
        app('ExecutionInterrupted', cw.Stats.SUM, 'interrupted'),
      ]),
      graph('Approvals', [app('ApprovalDecided', cw.Stats.SUM, 'decided'), app('ApprovalExpired', cw.Stats.SUM, 'expired')]),
      graph('Step duration (ms)', [app('StepDuration', cw.Stats.p(50), 'p50'), app('StepDuration', cw.Stats.p(99), 'p99')]),
      graph('Schedules', [
        app('ScheduleFired', cw.Stats.SUM, 'fired'),
        app('ScheduleSkipped', cw.Stats.SUM, 'skipped (a run unfinished)'),
        app('ScheduleFailed', cw.Stats.SUM, 'failed'),
        app('ScheduleDriftRepaired', cw.Stats.SUM, 'drift repaired by the sweep'),
      ]),
      graph('Event notifications', [
        app('NotificationDelivered', cw.Stats.SUM, 'delivered'),
        app('NotificationFailed', cw.Stats.SUM, 'failed attempts'),
      ]),
      graph('Delivery failures', [app('DeliveryFailed', cw.Stats.SUM, 'failed for good (delivery log)')]),
    ];
  }
}
