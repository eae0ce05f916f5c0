// A run's actions from its console page, through the same engine functions as the v1 API, recorded
// as the signed-in user (a retry's and a resume's `by`, a rerun's `startedBy`, a cancel's `by`).
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { cancelRun } from '../../../../shared/engine/cancel.ts';
import { resumeRun } from '../../../../shared/engine/resume.ts';
import { retryRun } from '../../../../shared/engine/retry-failed-run.ts';
import { rerunRun } from '../../../../shared/engine/rerun.ts';
import { REASON_CHARS, type RunAction } from './action-names.ts';

/**
 * Do `action` as the signed-in user; the id of the run to show afterwards (a rerun's is the new run).
 * `form`: the confirmation's fields: a cancel's `reason`, a retry's `retryKey` (an idempotency key
 * made with the confirmation page, so a form sent twice retries once, and a run that failed again
 * after a retry can be retried from a new confirmation).
 */
export async function doAction(action: RunAction, session: ConsoleSession, executionId: string, form: URLSearchParams): Promise<string> {
  const { accountId, userId } = session.principal;
  // The principal carries where the request came from (the audit log's channel and address).
  const who = session.principal;
  switch (action) {
    case 'cancel': {
      const reason = form.get('reason')?.trim().slice(0, REASON_CHARS) || undefined;
      return (await cancelRun(accountId, executionId, reason, userId, Date.now(), who)).executionId;
    }
    case 'retry': {
      const key = form.get('retryKey') ?? '';
      const idempotency = /^[\x21-\x7e]{1,255}$/.test(key) ? { key } : undefined;
      return (await retryRun(accountId, executionId, who, idempotency)).execution.executionId;
    }
    case 'rerun':
      return (await rerunRun(accountId, executionId, who)).execution.executionId;
    case 'resume':
      return (await resumeRun(accountId, executionId, userId, Date.now(), who)).executionId;
  }
}
