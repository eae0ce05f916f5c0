// The `schedule-fire` function: EventBridge Scheduler's target on AWS, invoked asynchronously (one
// invocation per fire; an error is retried twice by Lambda's async queue, about 1 and 3 minutes later,
// then its record goes to the on-failure queue: functions/async-invokes.ts; the scheduler's own retry
// policy and DLQ see only invokes that fail), the local scheduler's locally, the same way
// (infra/local/scheduler.ts). One fire starts one run as the v1 start does, also when retried
// (shared/domain/schedule-fires.ts `fireSchedule`).
import { requireConfig } from '../../shared/config.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { fireSchedule } from '../../shared/domain/schedule-fires.ts';
import { logger } from '../../shared/logger.ts';
import { FireEvent } from '../../shared/schedules/clock.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('schedule/fire'));

/**
 * The outcome, for the logs and tests; a transient error throws, so Lambda tries the fire again. What
 * the fire counted (its run's start in the account's hour) is written before it returns: nothing else
 * flushes this function's counts.
 */
export const handler = async (event: unknown) => {
  try {
    return await fire(event);
  } finally {
    await flushCounts();
  }
};

async function fire(event: unknown) {
  const parsed = FireEvent.safeParse(event);
  if (!parsed.success) {
    logger.error('malformed schedule fire dropped', { issues: parsed.error.issues.map((i) => i.message) });
    return { outcome: 'malformed' as const };
  }
  const { accountId, scheduleId, scheduledTime } = parsed.data;
  const result = await fireSchedule({ accountId, scheduleId, scheduledAt: Date.parse(scheduledTime) });
  logger.info('schedule fire', { scheduleId, scheduledTime, outcome: result.outcome });
  return result.outcome === 'fired' ? { outcome: result.outcome, executionId: result.execution.executionId } : result;
}
