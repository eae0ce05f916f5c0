import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../clients.ts';
import { type Approval, getApproval } from '../db/entities/approval.ts';
import {
  activeIndex,
  type Execution,
  type ExecutionStatus,
  eventsPut,
  executionKey,
  finishing,
  getExecution,
  newEvent,
  type RunEvent,
  storedFields,
} from '../db/entities/execution.ts';
import { buildUpdate } from '../db/update.ts';
import { isConditionFailure, notFound } from '../errors.ts';
import { emit } from '../metrics.ts';
import { newDispatch, sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';

export type Decision = { decision: 'approve' | 'reject'; comment?: string; decidedBy: string; formData?: Record<string, unknown> };
export type DecisionApproval = Pick<Approval, 'approvalId' | 'stepId' | 'onReject'>;

/**
 * The run's side of an approval decision, as transaction items the approvals module writes together
 * with the approval's own state change and audit record. `undefined` when the run is no longer
 * waiting for this approval (cancelled, interrupted): the decision is then recorded but moves nothing.
 * The step and its `onReject` come from the approval, so no definition is read.
 */
export function decisionTransition(
  e: Execution,
  approval: DecisionApproval,
  d: Decision,
  opts: {
    now?: number;
    /** The deadline passed: the step's `onTimeout`. */
    expired?: 'fail' | 'approve' | 'reject';
    /** A person resumes the INTERRUPTED run, which takes the decision recorded meanwhile. */
    resumed?: boolean;
  } = {},
) {
  const { now = Date.now(), expired, resumed } = opts;
  const { approvalId, stepId } = approval;
  if (e.status !== (resumed ? 'INTERRUPTED' : 'WAITING_APPROVAL') || e.approvalId !== approvalId) return undefined;
  const index = e.nextStep;
  const state = e.steps[index];
  if (state?.stepId !== stepId) return undefined;
  const output = { decision: d.decision, comment: d.comment ?? null, decidedBy: d.decidedBy, formData: d.formData ?? {} };
  const decided = newEvent(e.executionId, expired ? 'approval.expired' : 'approval.decided', { approvalId, stepId, ...output }, now);
  const condition = {
    expression: '#status = :seen AND approvalId = :ap',
    names: { '#status': 'status' },
    values: { ':seen': e.status, ':ap': approvalId },
  };
  // Leaving the waiting (or interrupted) state: what the run drops, and the active index it rejoins when it goes on.
  const dropped = ['approvalId', ...(resumed ? ['interruptedAt', 'interruptReason'] : [])];
  const rejected = expired === 'fail' || (d.decision === 'reject' && approval.onReject !== 'continue');
  const code = expired === 'fail' ? 'APPROVAL_EXPIRED' : 'APPROVAL_REJECTED';
  const steps = e.steps.map((s, i) =>
    i === index
      ? {
          ...s,
          status: rejected ? ('FAILED' as const) : ('SUCCEEDED' as const),
          finishedAt: now,
          ...(rejected ? { error: { code, message: expired ? 'The approval expired.' : `Rejected by ${d.decidedBy}.` } } : {}),
        }
      : s,
  );
  const outputs = { ...e.outputs, [stepId]: output };
  const key = executionKey(e.accountId, e.executionId);
  if (rejected) {
    const error = expired
      ? { code, message: `Step ${stepId} was not decided before its deadline.` }
      : { code, message: `Step ${stepId} was rejected${d.comment ? `: ${d.comment}` : '.'}` };
    const failed = newEvent(e.executionId, 'execution.failed', { error }, now);
    const end = finishing(now);
    return {
      items: [
        {
          Update: buildUpdate(
            key,
            storedFields({ status: 'FAILED', steps, outputs, error, ...end.set }),
            [...new Set([...dropped, ...end.remove])],
            condition,
          ),
        },
        eventsPut(e.accountId, [decided, failed]),
      ],
      events: [decided, failed] as RunEvent[],
      dispatch: undefined,
    };
  }
  const dispatch = newDispatch();
  const variables = d.decision === 'approve' ? { ...e.variables, ...d.formData } : e.variables;
  const fields = storedFields({
    status: 'RUNNING' as const,
    steps,
    outputs,
    variables,
    nextStep: index + 1,
    dispatch,
    updatedAt: now,
    ...(resumed ? activeIndex({ ...e, lease: undefined }) : {}),
  });
  return {
    items: [{ Update: buildUpdate(key, fields, dropped, condition) }, eventsPut(e.accountId, [decided])],
    events: [decided],
    dispatch,
  };
}

export type Transition = NonNullable<ReturnType<typeof decisionTransition>>;

/** After the decision's transaction: queue the resumed run and deliver its events. */
export async function afterDecision(e: Execution, t: Transition): Promise<void> {
  if (t.dispatch) await sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch: t.dispatch });
  else emit('ExecutionFailed');
  await notifyEvents(e, t.events);
}

/**
 * Apply a decision to the run waiting for it (the approvals endpoints record the decision itself).
 * Returns the status the run moved to, or `undefined` when it was not waiting for this approval.
 */
export async function resumeAfterDecision(accountId: string, executionId: string, approvalId: string, d: Decision, now = Date.now()) {
  const [e, approval] = await Promise.all([getExecution(accountId, executionId), getApproval(accountId, approvalId)]);
  if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
  const t = approval && decisionTransition(e, approval, d, { now });
  if (!t) return undefined;
  try {
    await db().send(new TransactWriteCommand({ TransactItems: t.items }));
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
  await afterDecision(e, t);
  return (t.dispatch ? 'RUNNING' : 'FAILED') as ExecutionStatus;
}
