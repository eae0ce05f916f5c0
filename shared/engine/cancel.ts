import { countRunChange } from '../db/entities/run-hours.ts';
import { writeAll } from '../db/transact.ts';
import { cancelRequest } from '../db/entities/execution-transitions.ts';
import { audited, type Auditor } from '../db/audited.ts';
import { cancelApprovalUpdate, getApproval } from '../db/entities/approval.ts';
import { cancelCallbackUpdate, getCallback } from '../db/entities/callback.ts';
import { eventsPut, newEvent, nextSeq } from '../db/entities/run-events.ts';
import { cancelledData, cancelledFields, cancelledUpdate } from '../db/entities/execution-writes.ts';
import { type Execution, getExecutionToChange } from '../db/entities/execution.ts';
import { keptChanging, lostRace, retryConflicts } from '../db/conflicts.ts';
import { conflict, notFound } from '../errors.ts';
import { notifyEvents } from './notify.ts';
import { countAcceptedTrigger, finished } from './runs.ts';

/**
 * Cancel: PENDING, INTERRUPTED, WAITING_APPROVAL (with its pending approval), WAITING_CALLBACK (with its
 * pending callback) and RUNNING runs that no
 * worker holds (waiting in a delay, or whose worker died) end at once; a RUNNING run held by a worker
 * is asked to stop, and the worker ends it before its next step (aborting an in-flight request).
 * Finished runs are a 409. Every write is conditional on the state read; a lost race is retried.
 * `by`: the user who asked (the console's signed-in user), on `execution.cancelled` as `by`; without
 * one, the API key of `who` as `key`.
 */
export async function cancelRun(
  accountId: string,
  executionId: string,
  reason: string | undefined,
  by?: string,
  now = Date.now(),
  /** Who asked, for the audit log (absent: `by` through the API). */
  who?: Auditor,
): Promise<Execution> {
  // Who asked, as the run keeps it and `execution.cancelled` says it: the user (`by`), or the API key (`key`) when no person did.
  const asked: Pick<Execution, 'cancelReason' | 'cancelBy' | 'cancelKey'> = {
    cancelReason: reason,
    ...(by ? { cancelBy: by } : who?.keyId ? { cancelKey: who.keyId } : {}),
  };
  const entry = () =>
    audited(who ?? { accountId, userId: by }, 'run.cancelled', { type: 'run', id: executionId }, reason ? { reason } : {}, now);
  return retryConflicts(
    async (attempt) => {
      const e = await getExecutionToChange(accountId, executionId);
      if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
      if (finished(e)) throw conflict('EXECUTION_FINISHED', `Execution ${executionId} is already ${e.status}.`);
      // A waiting run's approval or callback is pending: not read, unless a first try was refused
      // (one kept under its key of before the upgrade: the read moves it, docs/deploying.md "Upgrading").
      const waiting = (status: Execution['status']) => e.status === status && attempt === 1;
      const held = e.status === 'RUNNING' && e.lease !== undefined && e.lease.expiresAt > now;
      if (held) {
        // The run item is the worker's (hot while it runs): the request and its audit entry are one
        // transaction, which the worker's own writes survive (each retries a TransactionConflict;
        // docs/data-model.md "The audit log").
        await writeAll([cancelRequest({ accountId, executionId }, e.lease?.owner, { reason, by, key: asked.cancelKey, now }), entry()]);
        return { ...e, cancelRequested: true, ...asked, updatedAt: now };
      }
      const data = cancelledData(asked, e.status);
      const event = { ...newEvent(executionId, 'execution.cancelled', data, now), seq: nextSeq(e) };
      // The run's approval goes with it while pending (an interrupted run's may have been decided meanwhile).
      const pendingApproval =
        e.approvalId && (waiting('WAITING_APPROVAL') || (await getApproval(accountId, e.approvalId))?.status === 'PENDING');
      const items = [
        { Update: cancelledUpdate(e, reason, now) },
        eventsPut(accountId, [event]),
        entry(),
        ...(pendingApproval && e.approvalId ? [{ Update: cancelApprovalUpdate(accountId, e.approvalId, now) }] : []),
        // So does its callback (a later report is a 409).
        ...(e.callbackId && (waiting('WAITING_CALLBACK') || (await getCallback(accountId, e.callbackId))?.status === 'PENDING')
          ? [{ Update: cancelCallbackUpdate(accountId, e.callbackId, now) }]
          : []),
      ];
      await writeAll(items);
      countRunChange(e, { status: 'CANCELLED' }, now);
      if (e.status === 'PENDING') countAcceptedTrigger(e);
      const cancelled: Execution = { ...e, ...cancelledFields(e, reason, now) };
      delete cancelled.dispatch;
      delete cancelled.lease;
      delete cancelled.approvalId;
      delete cancelled.callbackId;
      delete cancelled.wakeAt;
      // Its pending approval's messages are updated too (the notice names it: the run no longer does).
      await notifyEvents(pendingApproval && e.approvalId ? { ...cancelled, approvalId: e.approvalId } : cancelled, [event]);
      return cancelled;
    },
    { attempts: 5, retryOn: lostRace, exhausted: keptChanging('execution') },
  );
}
