import { type TransactItem, writeAll } from '../db/transact.ts';
import { waitEnded } from '../db/entities/execution-transitions.ts';
import type { Approval } from '../db/entities/approval.ts';
import type { RecordedDecision } from '../db/entities/execution-state.ts';
import { eventsPut, newEvent, nextSeq, VOTE_ROOM } from '../db/entities/run-events.ts';
import { type Execution, moveOldExecution } from '../db/entities/execution.ts';
import { isConditionFailure, isTransactionConflict } from '../errors.ts';
import { newDispatch, sendRunMessage } from './dispatch.ts';

export type Decision = { decision: 'approve' | 'reject'; comment?: string; decidedBy: string; formData?: Record<string, unknown> };
export type DecisionApproval = Pick<Approval, 'approvalId' | 'accountId' | 'executionId' | 'stepId' | 'onReject' | 'runSeq'>;

/** The decider recorded for a deadline. */
export const TIMEOUT_ACTOR = 'timeout';

/** The decision a deadline stands for (`onTimeout: "fail"` is a rejection that fails the run). */
export const timeoutDecision = (onTimeout: Approval['onTimeout']): Decision => ({
  decision: onTimeout === 'approve' ? 'approve' : 'reject',
  decidedBy: TIMEOUT_ACTOR,
});

/**
 * The run's side of an approval decision, as transaction items the approvals module writes together
 * with the approval's own state change and audit record: the decision is recorded on the run, which
 * goes back to RUNNING with a new dispatch (its worker applies it: the step's output and state, the
 * form values, or the failure), and the `approval.decided` (or `approval.expired`) event. No read of
 * the run: the update is conditional on the run still waiting for this approval, and a decision on a
 * run that no longer waits (cancelled, interrupted) is recorded without these items
 * (`writeDecision`). `resumed`: a person resumes the INTERRUPTED run, which takes the decision
 * recorded meanwhile (it rejoins the active index).
 */
export function decisionTransition(
  approval: DecisionApproval,
  d: Decision,
  opts: { now?: number; expired?: 'fail' | 'approve' | 'reject'; resumed?: Execution; dispatch?: string; seq?: number } = {},
) {
  const { now = Date.now(), expired, resumed, dispatch = newDispatch() } = opts;
  // The run waits (seq = the approval's runSeq, unchanged by the votes): what ends the wait is numbered past the votes' room.
  const seq = opts.seq ?? (resumed ? nextSeq(resumed) : (approval.runSeq ?? 0) + VOTE_ROOM);
  const decision = recordedDecision(approval, d, { now, expired, seq });
  const update = waitEnded(
    approval,
    { approvalId: approval.approvalId, decision: JSON.stringify(decision) },
    { dispatch, now, seq, ...(resumed ? { resumed } : {}) },
  );
  const run = { accountId: approval.accountId, executionId: approval.executionId };
  return { items: [update, eventsPut(approval.accountId, [decision.event])], dispatch, run };
}

/**
 * What the run records of a decision, for its worker to apply (`applyDecision`): the step's output,
 * the failure it means (a rejection with `onReject: "fail"`, an expiry with `onTimeout: "fail"`) and
 * its event. `decisionTransition` writes it; a test run (./test-run.ts) applies it in memory.
 */
export function recordedDecision(
  approval: Pick<DecisionApproval, 'approvalId' | 'executionId' | 'stepId' | 'onReject'>,
  d: Decision,
  { now, expired, seq }: { now: number; expired?: 'fail' | 'approve' | 'reject'; seq?: number },
): RecordedDecision {
  const { approvalId, stepId } = approval;
  const output = { decision: d.decision, comment: d.comment ?? null, decidedBy: d.decidedBy, formData: d.formData ?? {} };
  const event = {
    ...newEvent(approval.executionId, expired ? 'approval.expired' : 'approval.decided', { approvalId, stepId, ...output }, now),
    ...(seq === undefined ? {} : { seq }),
  };
  const fails =
    expired === 'fail'
      ? {
          code: 'APPROVAL_EXPIRED' as const,
          message: `Step ${stepId} was not decided before its deadline.`,
          stepMessage: 'The approval expired.',
        }
      : d.decision === 'reject' && approval.onReject !== 'continue'
        ? {
            code: 'APPROVAL_REJECTED' as const,
            message: `Step ${stepId} was rejected${d.comment ? `: ${d.comment}` : '.'}`,
            stepMessage: `Rejected by ${d.decidedBy}.`,
          }
        : undefined;
  return { approvalId, stepId, at: now, output, ...(fails ? { fails } : {}), event };
}

export type Transition = ReturnType<typeof decisionTransition>;

/** The run's message for a recorded decision (it may go out beside the write: the worker waits for the record). */
export const decisionMessage = (approval: DecisionApproval, t: Transition) =>
  sendRunMessage({ accountId: approval.accountId, executionId: approval.executionId, dispatch: t.dispatch });

/**
 * Write an approval's own items (its change, its audit record) with its run's side, in one
 * transaction: `moved`. When only the run's condition refused it (the run no longer waits for this
 * approval: cancelled, interrupted), the approval's items alone: `recorded`. When the approval was
 * handled meanwhile (or a transaction was in flight on its items): `refused`, nothing written.
 */
export async function writeDecision(
  own: readonly object[],
  t: Pick<Transition, 'items' | 'run'>,
): Promise<'moved' | 'recorded' | 'refused'> {
  const write = (items: readonly object[]) => writeAll(items as TransactItem[]);
  const refused = (e: unknown) => {
    if (isConditionFailure(e) || isTransactionConflict(e)) return 'refused' as const;
    throw e;
  };
  try {
    await write([...own, ...t.items]);
    return 'moved';
  } catch (e) {
    if (!isRunItemRefusal(e, own.length)) return refused(e);
  }
  // A run in progress across the deploy that changed its key (./execution.ts, `executionMove`): moved
  // to its key, then the decision written again. One read on this path, which is rare, and none on any other.
  if (await moveOldExecution(t.run.accountId, t.run.executionId)) {
    try {
      await write([...own, ...t.items]);
      return 'moved';
    } catch (e) {
      if (!isRunItemRefusal(e, own.length)) return refused(e);
    }
  }
  // No items of the approval's own (tests move a run without deciding its approval): nothing to write.
  if (own.length === 0) return 'recorded';
  try {
    await write(own);
    return 'recorded';
  } catch (e) {
    return refused(e);
  }
}

/** The transaction was refused for the run's item only (its condition): the run no longer waits for this approval. */
function isRunItemRefusal(err: unknown, runItemIndex: number): boolean {
  const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return (
    isConditionFailure(err) &&
    Array.isArray(reasons) &&
    reasons[runItemIndex]?.Code === 'ConditionalCheckFailed' &&
    reasons.every((r, i) => i === runItemIndex || r.Code === 'None' || r.Code === undefined)
  );
}
