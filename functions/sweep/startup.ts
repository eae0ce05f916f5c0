// The startup sweep: after every deployment (a CDK trigger) and at every `npm start`. Webhook runs in
// progress become INTERRUPTED (reason `restart`) and wait for a person; nothing is replayed. On AWS only
// the orphaned ones by default (RESTART_SWEEP; a PENDING run waiting in a deep queue is not orphaned);
// `npm start` passes `rule: "all"` (a real restart).
// It never fails a deployment: CloudFormation's trigger fails on an error of the function (its
// rollback would then run the sweep again, and fail again: UPDATE_ROLLBACK_FAILED). A sweep that throws
// or runs out of time reports `ok: false`, logs the error and emits StartupSweepFailed (its alarm);
// the sweep is idempotent, so the next release (or a manual invoke) does what this one did not.
import { flushCounts } from '../../shared/db/counters.ts';
import { config, requireConfig } from '../../shared/config.ts';
import { workerSettings } from '../bindings.ts';
import { type RestartResult, type RestartRule, sweepRestart } from '../../shared/engine/recovery.ts';
import { logger } from '../../shared/logger.ts';
import { emit } from '../../shared/metrics.ts';

/** The sweep stops waiting this long before the function's time limit, to answer in time. */
const MARGIN_MS = 15_000;

export type StartupSweepResult = ({ ok: true } & RestartResult) | { ok: false; error: string };

/** `work`, or a rejection once `ms` have passed (the work itself goes on until the invocation ends). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the startup sweep did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export const handler = async (
  event?: { redispatch?: boolean; rule?: RestartRule },
  context?: { getRemainingTimeInMillis(): number },
): Promise<StartupSweepResult> => {
  try {
    // Checked here rather than at import, as other functions do: an error at import would fail the deployment.
    requireConfig(workerSettings('sweep/startup'));
    const rule = event?.rule ?? config().RESTART_SWEEP;
    const budget = Math.max(1_000, (context ? context.getRemainingTimeInMillis() : 300_000) - MARGIN_MS);
    const result = await within(budget, sweepRestart({ redispatch: event?.redispatch === true, rule }));
    // Runs interrupted from PENDING counted their triggers (`counters.ts`).
    await flushCounts();
    // Every release's count, 0 included: the metric's datapoints show when releases happened.
    emit('ReleaseInterrupted', result.interrupted);
    logger.info('startup sweep', { ...result });
    return { ok: true, ...result };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    try {
      logger.error('startup sweep failed: the deployment goes on; sweep again with the next release or a manual invoke', {
        error: error as Error,
      });
      emit('StartupSweepFailed');
    } catch {
      // Reporting must not fail the deployment either.
    }
    return { ok: false, error: message };
  }
};
