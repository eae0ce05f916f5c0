// Manual resume (v1, docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs"): an INTERRUPTED run re-enters the
// step it stopped in, or waits again, or takes what its wait recorded meanwhile.
import { countRunChange } from '../db/entities/run-hours.ts';
import { audited, type Auditor } from '../db/audited.ts';
import { writeAll } from '../db/transact.ts';
import { runChange } from '../db/entities/execution-transitions.ts';
import { type Approval, approvalRunSeqUpdate, getApproval } from '../db/entities/approval.ts';
import { callbackRunSeqUpdate, getCallback } from '../db/entities/callback.ts';
import { type Execution, getExecutionToChange } from '../db/entities/execution.ts';
import { eventsPut, type RunEvent } from '../db/entities/run-events.ts';
import { keptChanging, lostRace, retryConflicts } from '../db/conflicts.ts';
import { conflict, notFound } from '../errors.ts';
import { reportTransition } from './callbacks.ts';
import { type Decision, decisionMessage, decisionTransition, timeoutDecision } from './decisions.ts';
import { sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';
import { redispatch, resumedEvent } from './recovery.ts';

/** The decision an approval recorded while its run could not take it (interrupted). */
function recordedDecision(a: Approval): { decision: Decision; expired?: Approval['onTimeout'] } | undefined {
  if (a.status === 'EXPIRED') {
    return { decision: timeoutDecision(a.onTimeout), expired: a.onTimeout };
  }
  if ((a.status === 'APPROVED' || a.status === 'REJECTED') && a.decision) {
    return { decision: { decision: a.decision, comment: a.comment, decidedBy: a.decidedBy ?? 'unknown', formData: a.formData } };
  }
  return undefined;
}

/**
 * A resumed run that waits again (for its approval or callback): its status, `execution.resumed` and
 * the wait's own update (`waitUpdate`: what ends the wait is numbered after the event) in one write.
 */
async function waitAgain(
  e: Execution,
  status: 'WAITING_APPROVAL' | 'WAITING_CALLBACK',
  resumed: RunEvent,
  interrupted: string[],
  now: number,
  waitItems: object[],
) {
  const fields = { status, updatedAt: now, seq: resumed.seq };
  await writeAll([
    runChange(e, fields, interrupted, { as: { ...e, lease: undefined, dispatch: undefined }, now }),
    eventsPut(e.accountId, [resumed]),
    ...waitItems,
  ]);
  await notifyEvents({ ...e, ...fields }, [resumed]);
}

/**
 * Manual resume (v1): an INTERRUPTED run re-enters the step it stopped in. A run interrupted while
 * waiting for an approval waits again, or, when the approval was decided (or expired) meanwhile,
 * takes that decision now. Returns the run as it is afterwards.
 */
export async function resumeRun(accountId: string, executionId: string, by: string, now = Date.now(), who?: Auditor): Promise<Execution> {
  const interrupted = ['interruptedAt', 'interruptReason'];
  // Each way of resuming writes the run in one transaction, with this entry.
  const entry = () => audited(who ?? { accountId, userId: by }, 'run.resumed', { type: 'run', id: executionId }, {}, now);
  return retryConflicts(
    async () => {
      const e = await getExecutionToChange(accountId, executionId);
      if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
      if (e.status !== 'INTERRUPTED') {
        throw conflict('EXECUTION_NOT_INTERRUPTED', `Execution ${executionId} is ${e.status}; only an INTERRUPTED run can be resumed.`);
      }
      const approval = e.approvalId ? await getApproval(accountId, e.approvalId) : undefined;
      const recorded = approval && recordedDecision(approval);
      const callback = e.callbackId ? await getCallback(accountId, e.callbackId) : undefined;
      const resumed = resumedEvent(e, by, 'manual', now);
      if (callback && callback.status !== 'PENDING' && callback.status !== 'CANCELLED') {
        // Reported (or timed out) while the run was interrupted: the run takes that outcome now.
        const t = reportTransition(callback, callback.status, { now, resumed: e, seq: resumed.seq + 1, error: callback.error });
        await writeAll([...t.items, eventsPut(accountId, [resumed]), entry()]);
        await Promise.all([sendRunMessage({ accountId, executionId, dispatch: t.dispatch }), notifyEvents(e, [resumed])]);
      } else if (callback?.status === 'PENDING') {
        // Waiting again: what ends the wait is numbered after `execution.resumed`.
        await waitAgain(e, 'WAITING_CALLBACK', resumed, interrupted, now, [
          { Update: callbackRunSeqUpdate(callback, resumed.seq) },
          entry(),
        ]);
      } else if (approval && recorded) {
        const t = decisionTransition(approval, recorded.decision, { now, expired: recorded.expired, resumed: e, seq: resumed.seq + 1 });
        await writeAll([...t.items, eventsPut(accountId, [resumed]), entry()]);
        await Promise.all([decisionMessage(approval, t), notifyEvents(e, [resumed])]);
      } else if (approval?.status === 'PENDING') {
        // Waiting again: the votes still to come are numbered after `execution.resumed` (the approval's runSeq moves with it).
        await waitAgain(e, 'WAITING_APPROVAL', resumed, interrupted, now, [
          { Update: approvalRunSeqUpdate(approval, resumed.seq) },
          entry(),
        ]);
      } else {
        await redispatch(e, by, 'manual', now, interrupted, [entry()]);
      }
      // Every way written: the run leaves the hour it was counted INTERRUPTED in.
      countRunChange(e, { status: 'RUNNING' }, now);
      return (await getExecutionToChange(accountId, executionId)) as Execution;
    },
    { attempts: 5, retryOn: lostRace, exhausted: keptChanging('execution') },
  );
}
