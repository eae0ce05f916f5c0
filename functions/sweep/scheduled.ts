// The scheduled sweep (EventBridge, every minute; a timer in local mode): expires approvals past
// their deadline (and callbacks past theirs), and recovers runs whose worker died (their lease expired; ARCHITECTURE.md
// "Crash and restart semantics").
import { flushCounts } from '../../shared/db/counters.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { expireDueCallbacks } from '../../shared/domain/callbacks.ts';
import { sweepCrashed } from '../../shared/engine/recovery.ts';
import { logger } from '../../shared/logger.ts';
import { requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('sweep/scheduled'));

export const handler = async () => {
  const [expired, recovered, callbacks] = await Promise.all([expireDueApprovals(), sweepCrashed(), expireDueCallbacks()]);
  // Runs recovered from PENDING counted their triggers (`counters.ts`).
  await flushCounts();
  if (expired || recovered || callbacks) logger.info('scheduled sweep', { expired, recovered, callbacks });
  return { expired, recovered, callbacks };
};
