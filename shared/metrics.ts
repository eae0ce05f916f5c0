import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { APP_METRICS, type AppMetricName, METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names.ts';

let instance: Metrics | undefined;
const metrics = () => (instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE }));

/**
 * Publish one of the application's metrics now, as one EMF line (CloudWatch turns it into a metric):
 * no buffer that a handler or worker could forget to flush. `POWERTOOLS_METRICS_DISABLED=true`
 * (local mode and tests) turns publishing off.
 */
export function emit(name: AppMetricName, value = 1, dimensions: Record<string, string> = {}): void {
  const single = metrics().singleMetric();
  for (const [k, v] of Object.entries(dimensions)) single.addDimension(k, v);
  single.addMetric(name, APP_METRICS[name].unit === 'Milliseconds' ? MetricUnit.Milliseconds : MetricUnit.Count, value);
}

/** Forget the instance, so a changed environment takes effect (tests). */
export const resetMetrics = () => {
  instance = undefined;
};
