// The application's custom CloudWatch metrics, shared by the dashboard (infra/constructs/app-widgets.ts)
// and the functions that publish them with Powertools metrics (EMF). No imports on purpose: a
// function can import this file without pulling aws-cdk-lib into its bundle.

/** Powertools: `new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE })`. */
export const METRICS_NAMESPACE = 'Flowgate';
/** The `service` dimension every metric carries (Powertools adds it from `serviceName`). */
export const METRICS_SERVICE = 'flowgate';

/**
 * Every custom metric: name → unit and the dimensions it carries besides `service`. The dashboard
 * reads exactly these dimension sets; a metric published with another set (an extra default
 * dimension, say) is a different metric to CloudWatch and does not show.
 */
export const APP_METRICS = {
  /** A webhook trigger created a run. */
  TriggerAccepted: { unit: 'Count', dimensions: [] },
  /** A trigger to an open webhook (no key, no signature: anyone with its URL) created a run. */
  OpenWebhookTriggered: { unit: 'Count', dimensions: [] },
  /** A trigger was refused; `code` is the problem code (WEBHOOK_NOT_FOUND, INVALID_JSON, ...). */
  TriggerRejected: { unit: 'Count', dimensions: ['code'] },
  /** A request was refused with 429 by the account's rate limit. */
  RateLimited: { unit: 'Count', dimensions: [] },
  /** A failed authentication was answered 429: its source address is over AUTH_FAILURE_LIMIT. */
  AuthFailureLimited: { unit: 'Count', dimensions: [] },
  ExecutionStarted: { unit: 'Count', dimensions: [] },
  ExecutionSucceeded: { unit: 'Count', dimensions: [] },
  ExecutionFailed: { unit: 'Count', dimensions: [] },
  ExecutionInterrupted: { unit: 'Count', dimensions: [] },
  /** The scheduled sweep sent a run's message again: the run was not claimed when it was due (its message was never sent). */
  DispatchResent: { unit: 'Count', dimensions: [] },
  ApprovalDecided: { unit: 'Count', dimensions: [] },
  ApprovalExpired: { unit: 'Count', dimensions: [] },
  /** Wall time of one executed step. */
  StepDuration: { unit: 'Milliseconds', dimensions: [] },
  NotificationDelivered: { unit: 'Count', dimensions: [] },
  NotificationFailed: { unit: 'Count', dimensions: [] },
  /** A delivery (delivery log) FAILED for good: its attempts are spent or no retry can fix it. */
  DeliveryFailed: { unit: 'Count', dimensions: [] },
  /** A schedule's fire started a run / was skipped (a run of the schedule unfinished) / started nothing (shared/domain/schedule-fires.ts). */
  ScheduleFired: { unit: 'Count', dimensions: [] },
  ScheduleSkipped: { unit: 'Count', dimensions: [] },
  ScheduleFailed: { unit: 'Count', dimensions: [] },
  /** Webhook runs a release's startup sweep interrupted (functions/sweep/startup.ts); 0 too, once per release. */
  ReleaseInterrupted: { unit: 'Count', dimensions: [] },
  /** The startup sweep threw or ran out of time; the deployment went on (functions/sweep/startup.ts). */
  StartupSweepFailed: { unit: 'Count', dimensions: [] },
  /** The sweep found a schedule item without its timer or a timer without its item, and repaired it. */
  ScheduleDriftRepaired: { unit: 'Count', dimensions: [] },
} as const satisfies Record<string, { unit: 'Count' | 'Milliseconds'; dimensions: readonly string[] }>;

export type AppMetricName = keyof typeof APP_METRICS;

/** The names alone, for `metrics.addMetric(METRIC.TriggerAccepted, MetricUnit.Count, 1)`. */
export const METRIC = Object.fromEntries(Object.keys(APP_METRICS).map((name) => [name, name])) as {
  readonly [K in AppMetricName]: K;
};
