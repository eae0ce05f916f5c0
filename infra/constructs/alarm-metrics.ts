import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { TABLE } from '../../shared/db/table.ts';
import { type AppMetricName, METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';

// The alarms an on-call engineer would otherwise miss, and their metrics (the others: ./alarms.ts):
// quiet-window 5xx, the edge's own 429s, the account's concurrency headroom, DynamoDB's throttles by
// reason, and what a release's startup sweep interrupted or failed to do.

export const FIVE_MINUTES = Duration.minutes(5);
export const FIFTEEN_MINUTES = Duration.minutes(15);
export const ONE_MINUTE = Duration.minutes(1);

/** The 5xx of windows too quiet for the rate alarm: 0 from `min` requests per 5 minutes (the rate alarm decides there). */
export function quietServerErrors(api: IHttpApi, min: number) {
  return new cw.MathExpression({
    // Over 15 minutes, so a route called once every few minutes at night adds up; `min` is per 5 minutes.
    expression: `IF(FILL(requests, 0) < ${3 * min}, FILL(errors, 0), 0)`,
    usingMetrics: {
      requests: api.metricCount({ period: FIFTEEN_MINUTES, statistic: cw.Stats.SUM }),
      errors: api.metricServerError({ period: FIFTEEN_MINUTES, statistic: cw.Stats.SUM }),
    },
    label: `5xx in 15 minutes of fewer than ${3 * min} requests`,
    period: FIFTEEN_MINUTES,
  });
}

/** Where the edge's own 429s are counted: namespace `Flowgate/<stack>`, so two stages of an account stay apart. */
export const edgeThrottleMetric = (stackName: string) =>
  new cw.Metric({
    namespace: `${METRICS_NAMESPACE}/${stackName}`,
    metricName: 'EdgeThrottled',
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
    label: 'edge 429s (API Gateway throttles)',
  });

/**
 * An access-log line of a request API Gateway throttled itself: 429 with the gateway's own error
 * ("Too Many Requests"); a 429 of a function (an account's rate limit) has no gateway error.
 */
export const EDGE_THROTTLE_PATTERN = '{ ($.status = "429") && ($.error = "Too Many Requests") }';

/** The account's concurrency in use or set aside (reserved, provisioned), whichever is higher, per minute. */
export function accountConcurrency() {
  const max = (metricName: string) =>
    new cw.Metric({ namespace: 'AWS/Lambda', metricName, statistic: cw.Stats.MAXIMUM, period: ONE_MINUTE });
  return new cw.MathExpression({
    expression: 'MAX([FILL(claimed, 0), FILL(running, 0)])',
    usingMetrics: { claimed: max('ClaimedAccountConcurrency'), running: max('ConcurrentExecutions') },
    label: 'account concurrency claimed or running (max)',
    period: ONE_MINUTE,
  });
}

/** The reasons DynamoDB gives a throttle of an on-demand table, by their metric (Read/Write before, ThrottleEvents after). */
export const THROTTLE_REASONS = {
  /** A partition above its 3,000 RCU / 1,000 WCU: a hot key. */
  hotPartition: 'KeyRangeThroughput',
  /** The table or index above the account's per-table limit (40,000 RCU/WRU by default). */
  tableLimit: 'AccountLimit',
  /** Above the table's or index's own on-demand maximum (OnDemandThroughput), when one is set. */
  onDemandMax: 'MaxOnDemandThroughput',
} as const;

/** One reason's throttle events of the table and each of its indexes, reads and writes, summed (at most 10 metrics an alarm). */
export function throttlesFor(table: dynamodb.ITable, reason: (typeof THROTTLE_REASONS)[keyof typeof THROTTLE_REASONS]) {
  const targets: Record<string, string>[] = [
    { TableName: table.tableName },
    ...TABLE.indexes.map((ix) => ({ TableName: table.tableName, GlobalSecondaryIndexName: ix.name })),
  ];
  const usingMetrics: Record<string, cw.IMetric> = {};
  targets.forEach((dimensionsMap, i) => {
    for (const op of ['Read', 'Write']) {
      usingMetrics[`${op.toLowerCase()}${i}`] = new cw.Metric({
        namespace: 'AWS/DynamoDB',
        metricName: `${op}${reason}ThrottleEvents`,
        dimensionsMap,
        statistic: cw.Stats.SUM,
        period: FIVE_MINUTES,
      });
    }
  });
  if (Object.keys(usingMetrics).length > 10) throw new Error('An alarm combines at most 10 metrics: the table has too many indexes');
  return new cw.MathExpression({
    expression: Object.keys(usingMetrics)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + '),
    usingMetrics,
    label: `${reason} throttle events (table and indexes, reads and writes)`,
    period: FIVE_MINUTES,
  });
}

/** One of the service's own metrics (EMF, `service=flowgate`), summed per 5 minutes. */
export const appMetric = (metricName: AppMetricName) =>
  new cw.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: METRICS_SERVICE },
    statistic: cw.Stats.SUM,
    period: FIVE_MINUTES,
  });

/** Counts the edge's own 429s from the API's access log into `edgeThrottleMetric`. */
export function countEdgeThrottles(scope: Construct, accessLogs: logs.ILogGroup, stackName: string) {
  new logs.MetricFilter(scope, 'EdgeThrottledFilter', {
    logGroup: accessLogs,
    filterPattern: logs.FilterPattern.literal(EDGE_THROTTLE_PATTERN),
    metricNamespace: edgeThrottleMetric(stackName).namespace,
    metricName: edgeThrottleMetric(stackName).metricName,
    metricValue: '1',
  });
}

/** The keys of this module's alarms (in ALARMS, ./alarms.ts). */
type CapacityAlarmKey =
  | 'api5xxLowVolume'
  | 'edgeThrottles'
  | 'concurrencyHeadroom'
  | 'dynamoHotPartition'
  | 'dynamoTableLimit'
  | 'dynamoOnDemandMax'
  | 'releaseInterrupted'
  | 'startupSweepFailed';

type MakeAlarm = (
  key: CapacityAlarmKey,
  description: string,
  metric: cw.IMetric,
  options: Omit<cw.CreateAlarmOptions, 'alarmName' | 'alarmDescription'>,
) => cw.Alarm;

/** The alarms of this module, made by `alarm` (./alarms.ts: its name, description, topic and missing-data rule). */
export function capacityAndReleaseAlarms(
  alarm: MakeAlarm,
  props: { api: IHttpApi; table: dynamodb.ITable; min5xx: number; lambdaConcurrencyLimit: number; name: string },
) {
  const { api, table, min5xx } = props;
  const headroom = Math.floor(0.8 * props.lambdaConcurrencyLimit);
  const byReason = {
    threshold: 0,
    comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
  };
  return {
    api5xxLowVolume: alarm(
      'api5xxLowVolume',
      `The HTTP API answered 5xx at least 3 times in 15 minutes while it had fewer than ${3 * min5xx} requests (the rate alarm ignores such quiet windows): a low-volume route such as the approvals is failing. Find the route in the access log (status 5xx) and its function's log.`,
      quietServerErrors(api, min5xx),
      { threshold: 3, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD, evaluationPeriods: 1 },
    ),
    edgeThrottles: alarm(
      'edgeThrottles',
      "API Gateway refused requests with 429 itself (a route class's edge throttle, for all callers of the route) in 2 of the last 3 five-minute periods. Find the route in the access log (status 429, error 'Too Many Requests') and raise its class's throttle (context throttles) if the traffic is wanted.",
      edgeThrottleMetric(props.name),
      { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 3, datapointsToAlarm: 2 },
    ),
    concurrencyHeadroom: alarm(
      'concurrencyHeadroom',
      `The account's Lambda concurrency in this region (claimed or running, the higher) was above 80% of its ${props.lambdaConcurrencyLimit} (context lambdaConcurrencyLimit) in 3 of the last 5 minutes: throttles are next. Lower the workers' maximum concurrency or reservedConcurrency, or ask AWS for a higher quota (then set lambdaConcurrencyLimit).`,
      accountConcurrency(),
      { threshold: headroom, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 5, datapointsToAlarm: 3 },
    ),
    dynamoHotPartition: alarm(
      'dynamoHotPartition',
      'DynamoDB throttled reads or writes of one partition of the table or an index (KeyRangeThroughput: a hot key above 3,000 RCU / 1,000 WCU) in 2 of the last 3 five-minute periods. Find the key with CloudWatch Contributor Insights for DynamoDB.',
      throttlesFor(table, THROTTLE_REASONS.hotPartition),
      byReason,
    ),
    dynamoTableLimit: alarm(
      'dynamoTableLimit',
      "DynamoDB throttled the table or an index at the account's per-table limit (AccountLimit: 40,000 RCU/WRU by default) in 2 of the last 3 five-minute periods. Ask AWS for a higher table-level quota.",
      throttlesFor(table, THROTTLE_REASONS.tableLimit),
      byReason,
    ),
    dynamoOnDemandMax: alarm(
      'dynamoOnDemandMax',
      "DynamoDB throttled the table or an index at its own on-demand maximum (MaxOnDemandThroughput, the table's OnDemandThroughput) in 2 of the last 3 five-minute periods. Raise the maximum, or find what grew.",
      throttlesFor(table, THROTTLE_REASONS.onDemandMax),
      byReason,
    ),
    releaseInterrupted: alarm(
      'releaseInterrupted',
      "A release's startup sweep interrupted webhook runs (an expired lease, or a PENDING run whose message is gone). They wait for a person: GET /api/v1/executions?status=INTERRUPTED, then resume, rerun or cancel each.",
      appMetric('ReleaseInterrupted'),
      { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
    ),
    startupSweepFailed: alarm(
      'startupSweepFailed',
      "A release's startup sweep failed (the deployment went on). Read its log group ('startup sweep failed'), fix the cause, and invoke it again by hand or let the next release sweep.",
      appMetric('StartupSweepFailed'),
      { threshold: 0, comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD, evaluationPeriods: 1 },
    ),
  };
}
