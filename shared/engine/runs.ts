import { createHash } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';
import { approvalIndex, approvalKey, EXPIRY_INDEX_ATTRIBUTES, getApproval } from '../db/entities/approval.ts';
import {
  ACTIVE_INDEX_ATTRIBUTES,
  activeIndex,
  type Execution,
  type ExecutionStatus,
  eventPut,
  executionItem,
  executionKey,
  getExecution,
  listEvents,
  newEvent,
  type RunEvent,
  storedFields,
  executionItemBytes,
  MAX_EXECUTION_ITEM_BYTES,
} from '../db/entities/execution.ts';
import { getIdempotencyRecord, idempotencyDelete, idempotencyPut } from '../db/entities/idempotency.ts';
import { recordKeyUsage } from '../db/entities/api-key.ts';
import { recordAccepted } from '../db/entities/webhook.ts';
import { logger } from '../logger.ts';
import { getWorkflow, type Workflow } from '../db/entities/workflow.ts';
import { buildUpdate } from '../db/update.ts';
import { conflict, isConditionFailure, isTransactionConflict, notFound, validationFailed } from '../errors.ts';
import { pause } from '../db/retry.ts';
import { newId } from '../ids.ts';
import { applyVariableDefaults } from './variables.ts';
import { newDispatch, sendRunMessage } from './dispatch.ts';
import { notifyEvents } from './notify.ts';
import { emit } from '../metrics.ts';

/** A workflow by reference: the run takes its definition when the worker first picks it up. */
export type WorkflowRef = Pick<Workflow, 'accountId' | 'workflowId'>;

export type StartRun = {
  /** The workflow (v1, rerun), or a reference to it (webhooks: the trigger reads no workflow). */
  workflow: Workflow | WorkflowRef;
  trigger: Execution['trigger'];
  variables: Record<string, unknown>;
  startedBy?: string;
  webhookId?: string;
  rerunOf?: string;
  /** Opt-in deduplication: the same key and request within 24 h return the first execution. */
  idempotency?: { scope: string; key: string; request: unknown };
  /** Extra fields kept on the execution record (webhook payload, auth mode, key id, source IP). */
  extra?: Record<string, unknown>;
};

const hashRequest = (request: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(request ?? null))
    .digest('hex');

/**
 * What a run takes from its workflow: the definition as it is now (later edits do not change the
 * run), `recovery`, the variables with the template's defaults (or the errors of the inputs), and the
 * step list. A run started by reference takes it when the worker first picks it up (`resolveRun`).
 */
export function runFromWorkflow(workflow: Workflow, inputs: Record<string, unknown>) {
  const vars = applyVariableDefaults(workflow.definition, inputs);
  if (!vars.ok) return vars;
  return {
    ok: true as const,
    fields: {
      definition: workflow.definition,
      recovery: workflow.recovery,
      variables: vars.variables,
      steps: workflow.definition.steps.map((s) => ({ stepId: s.id, type: s.type, status: 'PENDING' as const })),
    },
  };
}

/**
 * Start a run: the one entry point for v1, webhooks and reruns. Writes the execution (PENDING) and its
 * first event (with the inputs as given) in one transaction, and sends the one queue message that may
 * claim it. With the workflow at hand the inputs are checked now (400 on a wrong type) and the run
 * takes the definition at once; by reference (webhooks) the worker does both when it picks the run up.
 */
export async function startRun(input: StartRun, now = Date.now()): Promise<{ execution: Execution; replayed: boolean }> {
  const { workflow } = input;
  const resolved = 'definition' in workflow ? runFromWorkflow(workflow, input.variables) : undefined;
  if (resolved && !resolved.ok) throw validationFailed(resolved.errors);
  const execution: Execution = {
    executionId: newId('ex'),
    accountId: workflow.accountId,
    workflowId: workflow.workflowId,
    webhookId: input.webhookId,
    trigger: input.trigger,
    status: 'PENDING',
    recovery: false,
    variables: input.variables,
    steps: [],
    ...resolved?.fields,
    outputs: {},
    nextStep: 0,
    startedAt: now,
    updatedAt: now,
    startedBy: input.startedBy,
    rerunOf: input.rerunOf,
    dispatch: newDispatch(),
    idempotencyKey: input.idempotency?.key,
    ...input.extra,
  };
  if (executionItemBytes(execution) > MAX_EXECUTION_ITEM_BYTES) {
    throw validationFailed([
      { path: 'variables', message: 'the run (variables and the workflow definition together) is too large to store' },
    ]);
  }
  // The inputs as given (before defaults) live on the first event, for reruns: an item of its own,
  // so the run record keeps room for up to 256 KiB of variables.
  const started = newEvent(
    execution.executionId,
    'execution.started',
    {
      trigger: execution.trigger,
      workflowId: workflow.workflowId,
      input: input.variables,
      ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}),
    },
    now,
  );
  const idem = input.idempotency;
  const requestHash = idem && hashRequest(idem.request);
  const write = db().send(
    new TransactWriteCommand({
      TransactItems: [
        ...(idem && requestHash
          ? [idempotencyPut(workflow.accountId, idem.scope, idem.key, { executionId: execution.executionId, requestHash, createdAt: now })]
          : []),
        { Put: { TableName: tableName(), Item: executionItem(execution), ConditionExpression: 'attribute_not_exists(PK)' } },
        eventPut(execution.accountId, started),
      ],
    }),
  );
  const message = () =>
    sendRunMessage({ accountId: execution.accountId, executionId: execution.executionId, dispatch: execution.dispatch as string });
  if (!idem) {
    // The message goes out together with the write, not after it: one round trip less on every start.
    // The worker waits a moment for a record it cannot see yet, and drops the message of a failed write.
    const [written, sent] = await Promise.allSettled([write, message()]);
    if (written.status === 'rejected') throw written.reason;
    if (sent.status === 'rejected') await abandonUnsent(execution, undefined, sent.reason);
  } else {
    // A replay must not send anything, so with an Idempotency-Key the message waits for the write.
    try {
      await write;
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const earlier = await getIdempotencyRecord(workflow.accountId, idem.scope, idem.key);
      if (!earlier || earlier.requestHash !== requestHash) {
        throw conflict('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request in the last 24 hours.');
      }
      const first = await getExecution(workflow.accountId, earlier.executionId);
      if (!first) throw notFound('EXECUTION_NOT_FOUND', 'The execution of this Idempotency-Key no longer exists.');
      return { execution: first, replayed: true };
    }
    await message().catch((cause: unknown) => abandonUnsent(execution, idem, cause));
  }
  emit('ExecutionStarted');
  await notifyEvents(execution, [started]);
  return { execution, replayed: false };
}

/**
 * The run's message could not be sent (the SDK's retries spent): rather than leave the run PENDING
 * for ever, end it FAILED (`DISPATCH_FAILED`) and answer the start with the error, so a retry by the
 * caller is the one run that happens (with an Idempotency-Key, the key is freed for it). Conditional
 * on the run still waiting for this dispatch: when a worker has claimed it meanwhile, the message did
 * arrive after all, and the start stands.
 */
async function abandonUnsent(e: Execution, idem: StartRun['idempotency'], cause: unknown): Promise<void> {
  const now = Date.now();
  const error = { code: 'DISPATCH_FAILED', message: 'The run could not be queued; its start was answered with an error.' };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: buildUpdate(
              executionKey(e.accountId, e.executionId),
              { status: 'FAILED', error, finishedAt: now, updatedAt: now },
              ['dispatch', ...ACTIVE_INDEX_ATTRIBUTES],
              {
                expression: '#status = :pending AND dispatch = :d',
                names: { '#status': 'status' },
                values: { ':pending': 'PENDING', ':d': e.dispatch },
              },
            ),
          },
          eventPut(e.accountId, newEvent(e.executionId, 'execution.failed', { error }, now)),
          ...(idem ? [idempotencyDelete(e.accountId, idem.scope, idem.key, e.executionId)] : []),
        ],
      }),
    );
  } catch (err) {
    if (isConditionFailure(err)) return;
    logger.error('unsent run left PENDING', { executionId: e.executionId, error: err as Error });
  }
  emit('ExecutionFailed');
  throw cause;
}

/**
 * Count an accepted webhook trigger (the webhook's stats, the bound key's usage) once its run leaves
 * PENDING: claimed by the worker, cancelled or interrupted first. Each of those is a conditional
 * write from PENDING, so exactly one counts. Off the trigger's hot path (README "Performance"): the
 * counters are items every trigger of a webhook or key would touch. A lost count is logged, never
 * an error.
 */
export async function countAcceptedTrigger(e: Execution): Promise<void> {
  if (e.trigger !== 'webhook' || !e.webhookId) return;
  const now = Date.now();
  await Promise.all([recordAccepted(e.webhookId, now), e.keyId && recordKeyUsage(e.keyId, now)]).catch((error: unknown) =>
    logger.warn('accepted trigger not counted', { executionId: e.executionId, webhookId: e.webhookId, error: error as Error }),
  );
}

/**
 * Rerun (v1): a new execution of the run's workflow, as it is now, with the inputs the run was started
 * with (defaults applied afresh), `rerunOf` pointing back. Only a run that has stopped (finished or
 * INTERRUPTED) is rerun: two copies of a run in progress are never started by accident.
 */
export async function rerunRun(accountId: string, executionId: string, by: { userId: string; keyId?: string }) {
  const e = await getExecution(accountId, executionId);
  if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
  if (!finished(e) && e.status !== 'INTERRUPTED') {
    throw conflict('EXECUTION_IN_PROGRESS', `Execution ${executionId} is ${e.status}; rerun it once it has finished or was interrupted.`);
  }
  const workflow = await getWorkflow(accountId, e.workflowId);
  if (!workflow) throw notFound('WORKFLOW_NOT_FOUND', `The workflow of execution ${executionId} no longer exists.`);
  const { items } = await listEvents(accountId, executionId, 1);
  const input = items[0]?.type === 'execution.started' ? items[0].data.input : undefined;
  return startRun({
    workflow,
    trigger: 'rerun',
    variables: input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {},
    startedBy: by.userId,
    rerunOf: executionId,
    extra: { keyId: by.keyId },
  });
}

const finished = (e: Execution) => e.status === 'SUCCEEDED' || e.status === 'FAILED' || e.status === 'CANCELLED';

/**
 * Cancel: PENDING, INTERRUPTED, WAITING_APPROVAL (with its pending approval) and RUNNING runs that no
 * worker holds (waiting in a delay, or whose worker died) end at once; a RUNNING run held by a worker
 * is asked to stop, and the worker ends it before its next step (aborting an in-flight request).
 * Finished runs are a 409. Every write is conditional on the state read; a lost race is retried.
 */
export async function cancelRun(accountId: string, executionId: string, reason: string | undefined, now = Date.now()): Promise<Execution> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const e = await getExecution(accountId, executionId);
    if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
    if (finished(e)) throw conflict('EXECUTION_FINISHED', `Execution ${executionId} is already ${e.status}.`);
    const held = e.status === 'RUNNING' && e.lease !== undefined && e.lease.expiresAt > now;
    try {
      if (held) {
        await db().send(
          new UpdateCommand(
            buildUpdate(executionKey(accountId, executionId), { cancelRequested: true, cancelReason: reason, updatedAt: now }, [], {
              expression: '#status = :running AND #lease.#owner = :owner',
              names: { '#status': 'status', '#lease': 'lease', '#owner': 'owner' },
              values: { ':running': 'RUNNING', ':owner': e.lease?.owner },
            }),
          ),
        );
        return { ...e, cancelRequested: true, cancelReason: reason, updatedAt: now };
      }
      const event = newEvent(executionId, 'execution.cancelled', { reason: reason ?? null, from: e.status }, now);
      // The run's approval goes with it while pending (an interrupted run's may have been decided meanwhile).
      const pendingApproval =
        e.approvalId && (e.status === 'WAITING_APPROVAL' || (await getApproval(accountId, e.approvalId))?.status === 'PENDING');
      const items = [
        { Update: cancelledUpdate(e, reason, now) },
        eventPut(accountId, event),
        ...(pendingApproval && e.approvalId ? [{ Update: cancelApprovalUpdate(accountId, e.approvalId, now) }] : []),
      ];
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      if (e.status === 'PENDING') await countAcceptedTrigger(e);
      const cancelled: Execution = { ...e, ...cancelledFields(e, reason, now) };
      delete cancelled.dispatch;
      delete cancelled.lease;
      delete cancelled.approvalId;
      await notifyEvents(cancelled, [event]);
      return cancelled;
    } catch (err) {
      if (!isConditionFailure(err) && !isTransactionConflict(err)) throw err;
      await pause(attempt);
    }
  }
  throw conflict('CONFLICT', 'The execution kept changing; try again.');
}

const cancelledFields = (e: Execution, reason: string | undefined, now: number) => ({
  status: 'CANCELLED' as const,
  finishedAt: now,
  updatedAt: now,
  cancelReason: reason,
  error: { code: 'CANCELLED', message: reason ? `Cancelled: ${reason}` : 'Cancelled.' },
  steps: e.steps.map((s) =>
    s.status === 'PENDING' || s.status === 'RUNNING' || s.status === 'WAITING' ? { ...s, status: 'CANCELLED' as const } : s,
  ),
});

/** The condition of a write that must see the run exactly as it was read (every checkpoint changes `updatedAt`). */
export const unchangedSince = (e: Execution) => ({
  expression: '#status = :seen AND updatedAt = :updated',
  names: { '#status': 'status' },
  values: { ':seen': e.status, ':updated': e.updatedAt },
});

/** The execution update that ends a run CANCELLED, conditional on the state (and lease) read. */
export function cancelledUpdate(e: Execution, reason: string | undefined, now: number) {
  return buildUpdate(
    executionKey(e.accountId, e.executionId),
    cancelledFields(e, reason, now),
    ['dispatch', 'lease', 'approvalId', 'wakeAt', ...ACTIVE_INDEX_ATTRIBUTES],
    unchangedSince(e),
  );
}

/** The approval update that cancels a pending approval with its run. */
export function cancelApprovalUpdate(accountId: string, approvalId: string, now: number) {
  return buildUpdate(
    approvalKey(accountId, approvalId),
    { status: 'CANCELLED', decidedAt: now, ...approvalIndex(accountId, 'CANCELLED', approvalId) },
    EXPIRY_INDEX_ATTRIBUTES,
    { expression: '#status = :pending', names: { '#status': 'status' }, values: { ':pending': 'PENDING' } },
  );
}

export type Decision = { decision: 'approve' | 'reject'; comment?: string; decidedBy: string; formData?: Record<string, unknown> };

/**
 * The run's side of an approval decision, as transaction items the approvals module writes together
 * with the approval's own state change and audit record. `undefined` when the run is no longer
 * waiting for this approval (cancelled, interrupted): the decision is then recorded but moves nothing.
 */
export function decisionTransition(
  e: Execution,
  approvalId: string,
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
  if (e.status !== (resumed ? 'INTERRUPTED' : 'WAITING_APPROVAL') || e.approvalId !== approvalId) return undefined;
  const index = e.nextStep;
  const step = e.definition?.steps[index];
  if (step?.type !== 'manual_approval') return undefined;
  const output = { decision: d.decision, comment: d.comment ?? null, decidedBy: d.decidedBy, formData: d.formData ?? {} };
  const decided = newEvent(
    e.executionId,
    expired ? 'approval.expired' : 'approval.decided',
    { approvalId, stepId: step.id, ...output },
    now,
  );
  const condition = {
    expression: '#status = :seen AND approvalId = :ap',
    names: { '#status': 'status' },
    values: { ':seen': e.status, ':ap': approvalId },
  };
  // Leaving the waiting (or interrupted) state: what the run drops, and the active index it rejoins when it goes on.
  const dropped = ['approvalId', ...(resumed ? ['interruptedAt', 'interruptReason'] : [])];
  const steps = [...e.steps];
  const rejected = expired === 'fail' || (d.decision === 'reject' && step.onReject !== 'continue');
  const code = expired === 'fail' ? 'APPROVAL_EXPIRED' : 'APPROVAL_REJECTED';
  steps[index] = {
    ...(steps[index] as Execution['steps'][number]),
    status: rejected ? 'FAILED' : 'SUCCEEDED',
    finishedAt: now,
    ...(rejected ? { error: { code, message: expired ? 'The approval expired.' : `Rejected by ${d.decidedBy}.` } } : {}),
  };
  const outputs = { ...e.outputs, [step.id]: output };
  if (rejected) {
    const error = expired
      ? { code, message: `Step ${step.id} was not decided before its deadline.` }
      : { code, message: `Step ${step.id} was rejected${d.comment ? `: ${d.comment}` : '.'}` };
    const failed = newEvent(e.executionId, 'execution.failed', { error }, now);
    return {
      items: [
        {
          Update: buildUpdate(
            executionKey(e.accountId, e.executionId),
            { status: 'FAILED', steps, outputs, error, finishedAt: now, updatedAt: now },
            [...dropped, ...ACTIVE_INDEX_ATTRIBUTES],
            condition,
          ),
        },
        eventPut(e.accountId, decided),
        eventPut(e.accountId, failed),
      ],
      events: [decided, failed] as RunEvent[],
      dispatch: undefined,
    };
  }
  const dispatch = newDispatch();
  const variables = d.decision === 'approve' ? { ...e.variables, ...d.formData } : e.variables;
  return {
    items: [
      {
        Update: buildUpdate(
          executionKey(e.accountId, e.executionId),
          storedFields({
            status: 'RUNNING',
            steps,
            outputs,
            variables,
            nextStep: index + 1,
            dispatch,
            updatedAt: now,
            ...(resumed ? activeIndex({ ...e, lease: undefined }) : {}),
          }),
          dropped,
          condition,
        ),
      },
      eventPut(e.accountId, decided),
    ],
    events: [decided] as RunEvent[],
    dispatch,
  };
}

/** After the decision's transaction: queue the resumed run and deliver its events. */
export async function afterDecision(e: Execution, t: NonNullable<ReturnType<typeof decisionTransition>>): Promise<void> {
  if (t.dispatch) await sendRunMessage({ accountId: e.accountId, executionId: e.executionId, dispatch: t.dispatch });
  else emit('ExecutionFailed');
  await notifyEvents(e, t.events);
}

/**
 * Apply a decision to the run waiting for it (the approvals endpoints record the decision itself).
 * Returns the status the run moved to, or `undefined` when it was not waiting for this approval.
 */
export async function resumeAfterDecision(accountId: string, executionId: string, approvalId: string, d: Decision, now = Date.now()) {
  const e = await getExecution(accountId, executionId);
  if (!e) throw notFound('EXECUTION_NOT_FOUND', `Execution ${executionId} does not exist.`);
  const t = decisionTransition(e, approvalId, d, { now });
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
