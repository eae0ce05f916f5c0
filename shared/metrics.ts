import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { APP_METRICS, type AppMetricName, METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names.ts';

let held: Metrics | undefined;
let tagged: Metrics | undefined;
const make = () => new Metrics({ namespace: METRICS_NAMESPACE, serviceName: METRICS_SERVICE });
/** Invocations in progress that hold their metrics (`holdMetrics`). */
let holding = 0;

/**
 * One of the application's metrics, as EMF (CloudWatch turns the log line into a metric).
 * `POWERTOOLS_METRICS_DISABLED=true` (local mode and tests) turns publishing off.
 *
 * Inside `holdMetrics` (every HTTP route and the queue workers) a metric without dimensions of its
 * own waits for the invocation's end, where all of them go out as one line (a metric emitted several
 * times holds its values as a list): CloudWatch Logs bills every byte, and one line per metric was
 * half a run's log bytes. A metric with dimensions goes out at once, on a line of its own (a line's
 * dimensions apply to every metric on it). Outside `holdMetrics` each goes out at once.
 *
 * Two instances for the life of the function: Powertools' `singleMetric()` would build a new Metrics
 * per call, re-reading the environment and creating a Console each time (about 3 ms of CPU per run on
 * the run path, seen with --cpu-prof).
 */
export function emit(name: AppMetricName, value = 1, dimensions: Record<string, string> = {}): void {
  const unit = APP_METRICS[name].unit === 'Milliseconds' ? MetricUnit.Milliseconds : MetricUnit.Count;
  const own = Object.entries(dimensions);
  if (own.length > 0) {
    tagged ??= make();
    for (const [k, v] of own) tagged.addDimension(k, v);
    tagged.addMetric(name, unit, value);
    tagged.publishStoredMetrics();
    return;
  }
  held ??= make();
  held.addMetric(name, unit, value);
  if (holding === 0) held.publishStoredMetrics();
}

/** Run an invocation holding its metrics (see `emit`); they go out when the last one in progress ends, however it ends. */
export async function holdMetrics<T>(fn: () => Promise<T>): Promise<T> {
  holding++;
  try {
    return await fn();
  } finally {
    holding--;
    if (holding === 0 && held?.hasStoredMetrics()) held.publishStoredMetrics();
  }
}

/** Forget the instances, so a changed environment takes effect (tests). */
export const resetMetrics = () => {
  held = undefined;
  tagged = undefined;
};
