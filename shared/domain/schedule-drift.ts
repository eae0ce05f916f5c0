import { SCHEDULE_PARTITIONS } from '../db/entities/schedule-index.ts';
import { deleteScheduleItem, disableSchedule, markSynced, pageAllSchedules, type Schedule } from '../db/entities/schedule.ts';
import { existingWorkflows } from '../db/entities/workflow.ts';
import { forEachShard } from '../db/sweep-shards.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { clock, FIRE_DELIVERY_WINDOW_MS, fireTimes } from '../schedules/clock.ts';
import { parseScheduleExpression } from '../schedules/expression.ts';

/**
 * The sweep's repair: every enabled schedule with a fire ahead has its timer, with its current settings, and every timer has an
 * enabled schedule (created, deleted or disabled on one side while the other failed, or by hand in the
 * console). An enabled `at()` whose time and delivery window have passed (its fire never reached the item) is disabled.
 * A schedule whose workflow is gone (a workflow's delete stopped after the workflow, before its
 * schedules: a crash) is deleted, and its timer with it: the sweep finishes the delete.
 * Returns what it repaired (also the `ScheduleDriftRepaired` metric).
 */
export async function repairScheduleDrift(
  now = Date.now(),
): Promise<{ created: number; updated: number; deleted: number; orphaned: number }> {
  const timers = new Set(await clock().list());
  const wanted = new Set<string>();
  let created = 0;
  let updated = 0;
  let orphaned = 0;
  const repair = async (s: Schedule) => {
    if (!s.enabled) return;
    if (fireTimes(s, now, 1).length === 0) {
      // Past its delivery window too (the scheduler's retries, then Lambda's async queue): no delivery of its fire can come any more.
      const parsed = parseScheduleExpression(s.expression);
      const done = parsed.ok && parsed.value.kind === 'at' && fireTimes(s, now - FIRE_DELIVERY_WINDOW_MS, 1).length === 0;
      if (done && !timers.has(s.scheduleId)) await disableSchedule(s, now);
      if (timers.has(s.scheduleId)) wanted.add(s.scheduleId);
      return;
    }
    wanted.add(s.scheduleId);
    // Missing, or written with older settings (an update whose timer write failed and was not put back).
    if (!timers.has(s.scheduleId) || s.syncedAt !== s.updatedAt) {
      await clock().put(s);
      await markSynced(s);
      if (timers.has(s.scheduleId)) updated++;
      else created++;
    }
  };
  // Every shard of the index, a few at once, each page by page.
  await forEachShard(SCHEDULE_PARTITIONS, async (partition) => {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await pageAllSchedules(partition, 100, startKey);
      const workflows = await existingWorkflows(page.items);
      for (const s of page.items) {
        if (workflows.has(`${s.accountId}/${s.workflowId}`)) await repair(s);
        // Its timer, not wanted, goes below.
        else if (await deleteScheduleItem(s)) orphaned++;
      }
      startKey = page.lastKey;
    } while (startKey);
  });
  let deleted = 0;
  for (const id of timers) {
    if (wanted.has(id)) continue;
    await clock().remove(id);
    deleted++;
  }
  if (created + updated + deleted + orphaned > 0) {
    emit('ScheduleDriftRepaired', created + updated + deleted + orphaned);
    logger.warn('schedule drift repaired', { created, updated, deleted, orphaned });
  }
  return { created, updated, deleted, orphaned };
}
