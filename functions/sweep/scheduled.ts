// The scheduled sweep (EventBridge, every minute; a timer in local mode): expires approvals past
// their deadline, and recovers runs whose worker died (their lease expired; ARCHITECTURE.md
// "Crash and restart semantics"), and repairs schedule drift (README "Schedules").
import { flushCounts } from '../../shared/db/counters.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { sweepCrashed } from '../../shared/engine/recovery.ts';
import { repairScheduleDrift } from '../../shared/domain/schedules.ts';
import { logger } from '../../shared/logger.ts';
import { requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('sweep/scheduled'));

export const handler = async () => {
  const [expired, recovered, schedules] = await Promise.all([expireDueApprovals(), sweepCrashed(), repairScheduleDrift()]);
  // Runs recovered from PENDING counted their triggers (`counters.ts`).
  await flushCounts();
  if (expired || recovered) logger.info('scheduled sweep', { expired, recovered });
  return { expired, recovered, schedules };
};
