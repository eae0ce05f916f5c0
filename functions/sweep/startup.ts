// The startup sweep: after every deployment (a CDK trigger) and at every `npm start`. Every webhook
// run in progress becomes INTERRUPTED (reason `restart`) and waits for a person; nothing is replayed.
// A failure fails the deployment, which CloudFormation rolls back: a restart is never left half-swept.
import { sweepRestart } from '../../shared/engine/recovery.ts';
import { logger } from '../../shared/logger.ts';

export const handler = async (event?: { redispatch?: boolean }) => {
  const result = await sweepRestart({ redispatch: event?.redispatch === true });
  logger.info('startup sweep', result);
  return result;
};
