// The scheduled sweep (EventBridge, every minute; a timer in local mode): expires approvals past
// their deadline. The restart part of the sweeps (INTERRUPTED runs) comes with the restart feature.
import { expireDueApprovals } from '../../shared/domain/expiry.ts';
import { logger } from '../../shared/logger.ts';

export const handler = async () => {
  const expired = await expireDueApprovals();
  if (expired) logger.info('approvals expired', { expired });
  return { expired };
};
