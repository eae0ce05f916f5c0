import { Duration, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from '../../shared/metric-names.ts';
import { ALARMS, type AlarmKey, FIVE_MINUTES, ONE_MINUTE, serverErrorRate, type WatchedResources } from './alarms.ts';
import { appWidgets } from './app-widgets.ts';

/** Functions shown as one line on the Lambda graphs: a route-table tag, a queue worker, the fallback. */
export type FunctionGroup = { name: string; functions: readonly IFunction[] };

/**
 * The CloudWatch dashboard `<name>-<region>`: a header and the alarms' states, then a row each for the
 * HTTP API, the functions by group, the queues, each alarm's own metric, and the service's own metrics.
 */
export function addDashboard(
  scope: Construct,
  props: {
    name: string;
    api: IHttpApi;
    groups: readonly FunctionGroup[];
    queues: WatchedResources['queues'];
    alarms: Record<AlarmKey, cw.Alarm>;
    min5xx: number;
  },
): cw.Dashboard {
  const { api, queues, alarms, min5xx } = props;
  const region = Stack.of(scope).region;
  const dashboard = new cw.Dashboard(scope, 'Dashboard', {
    dashboardName: `${props.name}-${region}`,
    defaultInterval: Duration.hours(3),
  });
  dashboard.addWidgets(
    new cw.TextWidget({
      markdown: `# Flowgate ${props.name}\nHTTP API, functions by route group, queues, table and the service's own metrics (namespace \`${METRICS_NAMESPACE}\`). See docs/deploying.md "Operating".`,
      width: 12,
      height: 3,
    }),
    new cw.AlarmStatusWidget({ title: 'Alarms', alarms: Object.values(alarms), width: 12, height: 3 }),
  );
  dashboard.addWidgets(...apiWidgets(api, min5xx));
  dashboard.addWidgets(...lambdaWidgets(props.groups));
  dashboard.addWidgets(...queueWidgets(queues));
  // Each alarm's own metric, with its threshold: the table's, the sweep's and the account's throttles
  // are shown nowhere else.
  dashboard.addWidgets(
    ...(Object.entries(alarms) as [AlarmKey, cw.Alarm][]).map(
      ([key, a]) => new cw.AlarmWidget({ title: ALARMS[key], alarm: a, width: 6, height: 5 }),
    ),
  );
  dashboard.addWidgets(...appWidgets());
  return dashboard;
}

function apiWidgets(api: IHttpApi, min5xx: number): cw.IWidget[] {
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
function lambdaWidgets(groups: readonly FunctionGroup[]): cw.IWidget[] {
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

function queueWidgets(queues: WatchedResources['queues']): cw.IWidget[] {
  const max = { period: ONE_MINUTE, statistic: cw.Stats.MAXIMUM };
  return [
    new cw.GraphWidget({
      title: 'Queue depth (visible messages)',
      left: [
        queues.runs.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs' }),
        queues.heavyRuns.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs, heavy lane' }),
        queues.notifications.metricApproximateNumberOfMessagesVisible({ ...max, label: 'notifications' }),
      ],
      width: 8,
    }),
    new cw.GraphWidget({
      title: 'Age of oldest message (s)',
      left: [
        queues.runs.metricApproximateAgeOfOldestMessage({ ...max, label: 'runs' }),
        queues.heavyRuns.metricApproximateAgeOfOldestMessage({ ...max, label: 'runs, heavy lane' }),
        queues.notifications.metricApproximateAgeOfOldestMessage({ ...max, label: 'notifications' }),
      ],
      leftAnnotations: [{ value: 300, label: 'runs alarms (both lanes)', color: cw.Color.RED }],
      width: 8,
    }),
    new cw.GraphWidget({
      title: 'Dead-letter queues (visible messages)',
      left: [
        queues.runsDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs DLQ' }),
        queues.heavyRunsDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'runs DLQ, heavy lane' }),
        queues.notificationsDlq.metricApproximateNumberOfMessagesVisible({ ...max, label: 'notifications DLQ' }),
      ],
      width: 8,
    }),
  ];
}
