// The scheduled sweep (EventBridge, every minute; a timer in local mode): expires approvals past
// their deadline, recovers runs whose worker died (their lease expired; ARCHITECTURE.md
// "Crash and restart semantics"), and sends due approval reminders and escalations (`shared/domain/nudges.ts`).
import { flushCounts } from '../../shared/db/counters.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { sweepCrashed } from '../../shared/engine/recovery.ts';
import { logger } from '../../shared/logger.ts';
import { requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('sweep/scheduled'));

export const handler = async () => {
  const [expired, recovered, { reminders, escalations }] = await Promise.all([expireDueApprovals(), sweepCrashed(), nudgeDueApprovals()]);
  // Runs recovered from PENDING counted their triggers (`counters.ts`).
  await flushCounts();
  if (expired || recovered || reminders || escalations) logger.info('scheduled sweep', { expired, recovered, reminders, escalations });
  return { expired, recovered, reminders, escalations };
};
