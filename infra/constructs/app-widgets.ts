import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { type AppMetricName, METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';
import { FIVE_MINUTES } from './alarms.ts';

/** The service's own EMF metrics (APP_METRICS), all with `service=flowgate`. */
export function appWidgets(): cw.IWidget[] {
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
      app('DispatchResent', cw.Stats.SUM, 'run messages sent again by the sweep'),
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
    graph('Releases (startup sweep)', [
      app('ReleaseInterrupted', cw.Stats.SUM, 'runs interrupted by a release'),
      app('StartupSweepFailed', cw.Stats.SUM, 'sweep failed (the deploy went on)'),
    ]),
  ];
}
