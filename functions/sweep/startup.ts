// The startup sweep: after every deployment (a CDK trigger) and at every `npm start`. Webhook runs in
// progress become INTERRUPTED (reason `restart`) and wait for a person; nothing is replayed. On AWS only
// the orphaned ones by default (RESTART_SWEEP); `npm start` passes `rule: "all"` (a real restart).
// A failure fails the deployment, which CloudFormation rolls back: a restart is never left half-swept.
import { flushCounts } from '../../shared/db/counters.ts';
import { config, requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';
import { type RestartRule, sweepRestart } from '../../shared/engine/recovery.ts';
import { logger } from '../../shared/logger.ts';

requireConfig(workerSettings('sweep/startup'));

export const handler = async (event?: { redispatch?: boolean; rule?: RestartRule }) => {
  const rule = event?.rule ?? config().RESTART_SWEEP;
  const result = await sweepRestart({ redispatch: event?.redispatch === true, rule });
  // Runs interrupted from PENDING counted their triggers (`counters.ts`).
  await flushCounts();
  logger.info('startup sweep', result);
  return result;
};
