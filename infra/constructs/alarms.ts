import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';
import { capacityAndReleaseAlarms, countEdgeThrottles, FIVE_MINUTES, ONE_MINUTE } from './alarm-metrics.ts';
import { ALARMS } from './alarm-names.ts';

export { EDGE_THROTTLE_PATTERN, FIFTEEN_MINUTES, FIVE_MINUTES, ONE_MINUTE } from './alarm-metrics.ts';

/** What the alarms watch (and the dashboard shows). */
export type WatchedResources = {
  api: IHttpApi;
  /** `worker/execute`: its errors alarm. */
  runsWorker: IFunction;
  /** `worker/notify`: its errors alarm. */
  notifyWorker: IFunction;
  /** `sweep/scheduled`: its errors and not-running alarms. */
  scheduledSweep: IFunction;
  /** The runs queues of both lanes (`heavyRuns`: shared/engine/lanes.ts), the notifications queue, and their DLQs. */
  queues: { runs: IQueue; runsDlq: IQueue; heavyRuns: IQueue; heavyRunsDlq: IQueue; notifications: IQueue; notificationsDlq: IQueue };
  /** The schedules: the `schedule-fire` function (its errors and events-dropped alarms) and the scheduler's DLQ (its alarm). */
  schedules: { fire: IFunction; dlq: IQueue };
  /** The on-failure queue of the asynchronous invocations (`schedule/fire`, `sweep/scheduled`): its alarm. */
  asyncFailures: IQueue;
  table: dynamodb.ITable;
  /** Audit entries onto EventBridge: the stream's worker (its errors and iterator age alarms) and its DLQ. */
  auditEvents: { worker: IFunction; dlq: IQueue };
  /** The HTTP API's access log: the edge's own 429s are counted from it (API Gateway publishes no throttle metric for HTTP APIs). */
  apiAccessLogs: logs.ILogGroup;
  /** The account's Lambda concurrency quota in this region (the headroom alarm's 100 %). */
  lambdaConcurrencyLimit: number;
};

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

export { ALARMS };
export type AlarmKey = keyof typeof ALARMS;

/** The 5xx share of requests in percent, 0 below `min` requests (metric math, used by graph and alarm). */
export function serverErrorRate(api: IHttpApi, min: number) {
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
 * The alarms, each notifying `topic` (if any) when it fires and when it recovers, named
 * `<name>-<ALARMS[key]>`. Every alarm treats missing data as OK (an idle service has no datapoints),
 * but the one for the scheduled sweep not running, whose failure is the missing data.
 */
export function addAlarms(
  scope: Construct,
  props: WatchedResources & { name: string; min5xx: number; topic: sns.ITopic | undefined },
): Record<AlarmKey, cw.Alarm> {
  const { api, queues, table, topic, min5xx } = props;
  countEdgeThrottles(scope, props.apiAccessLogs, props.name);
  const alarm = (
    key: AlarmKey,
    description: string,
    metric: cw.IMetric,
    options: Omit<cw.CreateAlarmOptions, 'alarmName' | 'alarmDescription'>,
  ) => {
    const a = new cw.Alarm(scope, `${key.charAt(0).toUpperCase()}${key.slice(1)}Alarm`, {
      metric,
      alarmName: `${props.name}-${ALARMS[key]}`,
      alarmDescription: `${description} See docs/deploying.md "Operating".`,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      ...options,
    });
    if (topic) {
      a.addAlarmAction(new SnsAction(topic));
      a.addOkAction(new SnsAction(topic));
    }
    return a;
  };
  const dlqAlarm = (
    key: AlarmKey,
    dlq: IQueue,
    what: string,
    description = `${what} gave up on messages (the dead-letter queue is not empty). Inspect them in the SQS console, fix the cause, then redrive or purge.`,
  ) =>
    alarm(key, description, dlq.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: cw.Stats.MAXIMUM }), {
      threshold: 0,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
  /** Events of an asynchronously invoked function that Lambda dropped unrun (retries spent, or too old): each also went to the on-failure queue. */
  const eventsDropped = (fn: IFunction) =>
    new cw.Metric({
      namespace: 'AWS/Lambda',
      metricName: 'AsyncEventsDropped',
      dimensionsMap: { FunctionName: fn.functionName },
      statistic: cw.Stats.SUM,
      period: FIVE_MINUTES,
    });
  const dropped = { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 };
  /** Deliveries of the delivery log that FAILED for good (shared/engine/senders.ts), per 5 minutes. */
  const deliveriesFailed = new cw.Metric({
    namespace: METRICS_NAMESPACE,
    metricName: 'DeliveryFailed',
    dimensionsMap: { service: METRICS_SERVICE },
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
    label: 'deliveries failed for good',
  });
  return {
    runsDlq: dlqAlarm('runsDlq', queues.runsDlq, 'The runs worker'),
    heavyRunsDlq: dlqAlarm('heavyRunsDlq', queues.heavyRunsDlq, "The runs worker (the heavy lane's queue)"),
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
    heavyRunsQueueAge: alarm(
      'heavyRunsQueueAge',
      "A message has waited on the heavy lane's runs queue (the new runs of accounts over heavyAccountRequestsPerMinute) for more than 5 minutes: the worker is failing, throttled or not consuming, or heavy accounts' backlog is more than heavyRunsWorkerConcurrency drains.",
      queues.heavyRuns.metricApproximateAgeOfOldestMessage({ period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM }),
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
      'The scheduled sweep (sweep/scheduled) failed in 3 of the last 5 minutes: approvals stop expiring and crashed runs are not found. Lambda retries each failed tick twice (about 1 and 3 minutes later), then sends it to the async-failures queue. Read its log group.',
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
      "The schedule-fire function (schedule/fire) failed invocations in 3 of the last 5 minutes: schedules are not starting runs. Lambda's async queue retries each failed fire twice (about 1 and 3 minutes later), then sends it to the async-failures queue (EventBridge Scheduler's retries and DLQ never see a function error). Read its log group.",
      props.schedules.fire.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
      { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
    ),
    schedulerDlq: dlqAlarm(
      'schedulerDlq',
      props.schedules.dlq,
      'EventBridge Scheduler',
      'EventBridge Scheduler could not invoke the schedule-fire function for an hour (the function missing, its role refused, the invoke throttled) and dead-lettered a fire; a fire the function itself failed is in the async-failures queue instead. The message names the schedule and its time: fix the cause, run what was missed with POST /api/schedules/{id}/run if it matters, then purge.',
    ),
    asyncFailures: dlqAlarm(
      'asyncFailures',
      props.asyncFailures,
      'Lambda',
      "A schedule fire or a scheduled sweep failed its 3 tries (or waited longer than its maximum age), and Lambda sent its record to the async-failures queue. Each message names the function (requestContext.functionArn), the condition, the error and the event (requestPayload: a fire's schedule and time). Fix the cause; run a missed fire with POST /api/schedules/{id}/run if it matters (a sweep's next tick does a missed tick's work); then purge.",
    ),
    fireEventsDropped: alarm(
      'fireEventsDropped',
      'Lambda dropped schedule fires unrun (AsyncEventsDropped of schedule/fire): their retries were spent or they grew older than an hour. Their records are in the async-failures queue.',
      eventsDropped(props.schedules.fire),
      dropped,
    ),
    sweepEventsDropped: alarm(
      'sweepEventsDropped',
      'Lambda dropped scheduled-sweep ticks unrun (AsyncEventsDropped of sweep/scheduled): their retries were spent or they grew older than 10 minutes. Their records are in the async-failures queue.',
      eventsDropped(props.scheduledSweep),
      dropped,
    ),
    auditEventsErrors: alarm(
      'auditEventsErrors',
      'The audit-events worker (worker/audit-events) failed invocations in 3 of the last 5 minutes (an entry EventBridge refused is a batch item failure, not a failed invocation): audit entries are not reaching EventBridge. Read its log group.',
      props.auditEvents.worker.metricErrors({ period: ONE_MINUTE, statistic: cw.Stats.SUM }),
      { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
    ),
    auditEventsAge: alarm(
      'auditEventsAge',
      "The audit-events worker is more than 15 minutes behind the table's stream (its iterator age): a batch keeps failing (its retries, up to 10, hold the shard) or the worker is throttled. The stream keeps records 24 hours.",
      props.auditEvents.worker.metric('IteratorAge', { period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM }),
      { threshold: 900_000, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
    ),
    auditEventsDlq: dlqAlarm('auditEventsDlq', props.auditEvents.dlq, 'The audit-events worker'),
    ...capacityAndReleaseAlarms(alarm, { api, table, min5xx, lambdaConcurrencyLimit: props.lambdaConcurrencyLimit, name: props.name }),
  };
}
