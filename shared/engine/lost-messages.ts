// Lost messages (docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs"): a run handed to a
// queue message waits in the active index under its due time (`D#`); the scheduled sweep sends the
// message of a run still unclaimed when it is due again. Crashes and restarts are ./recovery.ts.
import { type Execution, getExecution } from '../db/entities/execution.ts';
import { postponeDue } from '../db/entities/execution-index.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { delayUntil, sendRunMessage } from './dispatch.ts';
import { count, eachActive, settle } from './recovery.ts';

/** A run still waiting, unclaimed, for the dispatch it was handed to when the sweep read it. */
const unclaimed = (dispatch: string | undefined) => (e: Execution) =>
  dispatch !== undefined && e.dispatch === dispatch && !e.lease && (e.status === 'PENDING' || e.status === 'RUNNING');

/** The longest a run waits between two sends of its message by the sweep (on top of the grace). */
const MAX_RESEND_BACKOFF_MS = 13 * 60_000;

/**
 * Send a run's message again: its due time moves on first (conditional on the run still waiting for
 * this dispatch), then the message goes out with the same dispatch id, so a message that was only
 * late and this one claim the run once between them. Cut off between the two, the next sweep sends it.
 */
async function resend(e: Execution, now: number) {
  const dispatch = e.dispatch as string;
  // The longer it has waited, the longer until the next try (a deep queue is not flooded with copies).
  const backoff = Math.min(Math.max(now - e.updatedAt, 0), MAX_RESEND_BACKOFF_MS);
  await postponeDue(e, now + backoff);
  await sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch }, delayUntil(e.wakeAt, now));
  emit('DispatchResent');
  logger.warn('run message sent again: the run was not claimed when it was due', { executionId: e.executionId, status: e.status });
}

/**
 * The scheduled sweep's dispatch part: every run handed to a queue message that has not claimed it
 * within `DISPATCH_GRACE_SECONDS` of when it could (the message was never sent: the invocation that
 * handed the run over was cut off before its send, or the send failed after the write).
 */
export async function sweepUnclaimed(now = Date.now()): Promise<number> {
  let resent = 0;
  for (const kind of ['webhook', 'api'] as const) {
    await eachActive(kind, { part: 'overdue', before: now }, async (items) => {
      const results = await Promise.allSettled(items.map((seen) => settle(seen, unclaimed(seen.dispatch), (e) => resend(e, now))));
      resent += count(results, 'overdue run message not sent again');
    });
  }
  return resent;
}

/**
 * A retried start found the run its first try wrote (`keepUnsent`): when that run still waits for the
 * dispatch it was written with (PENDING, unclaimed), its message may never have gone out, so it is
 * sent again. A message that did arrive meanwhile claimed the run first: a second one is dropped by the
 * worker's claim (conditional on the dispatch id), as any duplicate SQS delivery is.
 */
export async function sendUnsentRun(accountId: string, executionId: string): Promise<boolean> {
  const e = await getExecution(accountId, executionId);
  if (e?.status !== 'PENDING' || !e.dispatch) return false;
  await sendRunMessage({ accountId, executionId, dispatch: e.dispatch });
  return true;
}
