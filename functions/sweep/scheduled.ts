// The scheduled sweep (EventBridge, every minute; a timer in local mode): expires approvals past
// their deadline (and callbacks past theirs), recovers runs whose worker died (their lease expired;
// and sends again the message of a run handed to one that never claimed it;
// docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs"), sends due approval reminders and escalations
// (`shared/domain/nudges.ts`), and repairs schedule drift (docs/schedules.md).
import { flushCounts } from '../../shared/db/counters.ts';
import { expireDueCallbacks } from '../../shared/domain/callbacks.ts';
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { nudgeDueApprovals } from '../../shared/domain/nudges.ts';
import { sweepUnclaimed } from '../../shared/engine/lost-messages.ts';
import { sweepCrashed } from '../../shared/engine/recovery.ts';
import { repairScheduleDrift } from '../../shared/domain/schedule-drift.ts';
import { logger } from '../../shared/logger.ts';
import { requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';

requireConfig(workerSettings('sweep/scheduled'));

/** A pass stops taking more work this long before the function's time limit (60 s). */
const MARGIN_MS = 15_000;

export const handler = async (_event?: unknown, context?: { getRemainingTimeInMillis(): number }) => {
  const now = Date.now();
  const until = now + (context ? context.getRemainingTimeInMillis() : 60_000) - MARGIN_MS;
  const [expired, recovered, resent, callbacks, { reminders, escalations }, schedules] = await Promise.all([
    expireDueApprovals(now, until),
    sweepCrashed(),
    sweepUnclaimed(),
    expireDueCallbacks(now, until),
    nudgeDueApprovals(now, until),
    repairScheduleDrift(),
  ]);
  // Runs recovered from PENDING counted their triggers (`counters.ts`).
  await flushCounts();
  if (expired || recovered || resent || callbacks || reminders || escalations)
    logger.info('scheduled sweep', { expired, recovered, resent, callbacks, reminders, escalations });
  return { expired, recovered, resent, callbacks, reminders, escalations, schedules };
};
