import { createHash } from 'node:crypto';
import { putNew } from '../db/batch.ts';
import { countKeyUse } from '../db/entities/api-key.ts';
import { eventsPut, newEvent, nextSeq, type RunEvent } from '../db/entities/run-events.ts';
import { executionItem, executionItemBytes, finishing, MAX_EXECUTION_ITEM_BYTES } from '../db/entities/execution-writes.ts';
import { type Execution, getExecution } from '../db/entities/execution.ts';
import { abandonedStart } from '../db/entities/execution-transitions.ts';
import { countRunChange, countRunStarted } from '../db/entities/run-hours.ts';
import { getIdempotencyRecord, idempotencyDelete, idempotencyPut } from '../db/entities/idempotency.ts';
import { countAccepted } from '../db/entities/webhook.ts';
import type { Workflow } from '../db/entities/workflow.ts';
import { putItem, type TransactItem, writeAll } from '../db/transact.ts';
import { conflict, isConditionFailure, notFound, validationFailed } from '../errors.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import { type Lane, newDispatch, sendRunMessage } from './dispatch.ts';
import { notifyTargets } from './notify.ts';
import { applyVariableDefaults } from './variables.ts';
import { type Defined, definitionOf, rememberVersion } from './versions.ts';

/** A workflow by reference: the run takes its version when the worker first picks it up. */
export type WorkflowRef = Pick<Workflow, 'accountId' | 'workflowId'>;

export type StartRun = {
  /** The workflow (v1, rerun), or a reference to it (a queued webhook run takes its workflow in the worker). */
  workflow: Workflow | WorkflowRef;
  trigger: Execution['trigger'];
  variables: Record<string, unknown>;
  startedBy?: string;
  webhookId?: string;
  rerunOf?: string;
  /** Opt-in deduplication: the same key and request within 24 h return the first execution. `label`
   * names the key in a refusal (default `Idempotency-Key`; a webhook sender's `delivery id`). */
  idempotency?: {
    scope: string;
    key: string;
    request: unknown;
    label?: string;
    /**
     * The caller retries this very key itself (a schedule fire: Lambda's async retries), and its retry
     * sends the message again (`sendUnsentRun`): a run whose message cannot be sent stays PENDING with
     * its key, and the start throws. Otherwise the run ends FAILED `DISPATCH_FAILED` and the key is freed
     * (`abandonUnsent`), and a retry would be a second run.
     */
    keepUnsent?: boolean;
  };
  /** Extra fields kept on the execution record (webhook payload, auth mode, key id, source IP). */
  extra?: Record<string, unknown>;
  /**
   * Conditional writes that must hold for the run to start (a schedule's overlap guard and its event), in the same
   * transaction as the run (so only with `idempotency`). When its condition fails and the key is free,
   * the start throws `StartGuardFailed` and nothing was written. Asked for once the run is checked and
   * about to be written (a schedule takes its event's seq only then); what it throws, the start throws.
   */
  guard?: (execution: Execution) => Record<string, unknown>[] | Promise<Record<string, unknown>[]>;
  /**
   * Items written with the run, in one transaction (a person's rerun: its audit entry), given the new
   * run; without `idempotency` the start is then that transaction instead of one BatchWrite.
   */
  alongside?: (execution: Execution) => Record<string, unknown>[];
  /**
   * A run that may end where it starts (`./inline.ts`): given the new run and its first event, it
   * executes the run in memory and returns the items that write it ended (no queue message) or
   * `handedOff` at a step that needs the worker (its message goes out as usual), which are written
   * instead of the start's, or undefined to queue the run as usual.
   */
  ended?: (
    execution: Execution,
    started: RunEvent,
  ) => Promise<{ items: Record<string, unknown>[]; run: Execution; handedOff?: boolean } | undefined>;
  /** The lane its message goes to (a heavy account's trigger: ./lanes.ts); none, the main runs queue. */
  lane?: Lane;
};

/** The `guard` of a start did not hold: nothing was written. */
export class StartGuardFailed extends Error {
  override name = 'StartGuardFailed';
}

export const hashRequest = (request: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(request ?? null))
    .digest('hex');

/**
 * What a run takes from its workflow: the version it executes (later edits do not change the run),
 * `recovery`, the variables with the template's defaults (or the errors of the inputs), and the step
 * list. A run started by reference takes it when the worker first picks it up.
 */
export function runFromWorkflow(workflow: Workflow, inputs: Record<string, unknown>) {
  const definition = definitionOf(workflow.definition);
  const vars = applyVariableDefaults(definition, inputs);
  if (!vars.ok) return vars;
  return {
    ok: true as const,
    fields: {
      workflowVersion: workflow.version,
      recovery: workflow.recovery,
      variables: vars.variables,
      steps: definition.steps.map((s) => ({ stepId: s.id, type: s.type, status: 'PENDING' as const })),
    },
  };
}

/**
 * A run started by reference, resolved against its workflow when it is first executed (by the worker,
 * or in its trigger): the fields it takes (`runFromWorkflow`), or why it fails at once (the workflow is
 * gone, its inputs are refused, or it is too large to store).
 */
export function resolveRun(e: Execution, workflow: Defined<Workflow> | undefined) {
  if (!workflow) return { error: { code: 'WORKFLOW_NOT_FOUND', message: `Workflow ${e.workflowId} no longer exists.` } };
  const r = runFromWorkflow(workflow, e.variables);
  if (!r.ok) {
    return {
      error: { code: 'VALIDATION_FAILED', message: `Inputs refused: ${r.errors.map((x) => `${x.path} ${x.message}`).join('; ')}.` },
    };
  }
  if (executionItemBytes({ ...e, ...r.fields }) > MAX_EXECUTION_ITEM_BYTES) {
    return { error: { code: 'STATE_TOO_LARGE', message: 'The run is too large to store.' } };
  }
  return { fields: r.fields, workflow };
}

/**
 * Start a run: the one entry point for v1, webhooks and reruns. Writes the execution (PENDING) and its
 * first event (with the inputs as given, for reruns) in one BatchWrite (new items with fresh ids need
 * no condition, and a transaction would double their cost), and sends the one queue message that may
 * claim it. With the workflow at hand the inputs are checked now (400 on a wrong type) and the run
 * takes its version at once; by reference (webhooks) the worker does both when it picks the run up.
 */
export async function startRun(input: StartRun, now = Date.now()): Promise<{ execution: Execution; replayed: boolean }> {
  const { workflow } = input;
  const resolved = 'definition' in workflow ? runFromWorkflow(workflow, input.variables) : undefined;
  if (resolved && !resolved.ok) throw validationFailed(resolved.errors);
  if ('definition' in workflow) rememberVersion(workflow);
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
    // Its first event, `execution.started`, is number 1.
    seq: 1,
    idempotencyKey: input.idempotency?.key,
    ...input.extra,
  };
  if (executionItemBytes(execution) > MAX_EXECUTION_ITEM_BYTES) {
    throw validationFailed([{ path: 'variables', message: 'the run is too large to store' }]);
  }
  // The inputs as given (before defaults) live on the first event, for reruns: an item of its own,
  // so the run record keeps room for up to 256 KiB of variables.
  const started = {
    seq: 1,
    ...newEvent(
      execution.executionId,
      'execution.started',
      {
        trigger: execution.trigger,
        workflowId: workflow.workflowId,
        input: input.variables,
        ...(input.rerunOf ? { rerunOf: input.rerunOf } : {}),
      },
      now,
    ),
  };
  // A run that ends where it starts is written once, ended, and needs no message; one its start took
  // up to a step that needs a worker is written there, handed to the message as a worker's release leaves it.
  const ran = await input.ended?.(execution, started);
  const items = ran?.items ?? [executionItem(execution), eventsPut(execution.accountId, [started]).Put.Item];
  const idem = input.idempotency;
  const message = () =>
    ran && !ran.handedOff
      ? Promise.resolve()
      : sendRunMessage({
          accountId: execution.accountId,
          executionId: execution.executionId,
          dispatch: execution.dispatch as string,
          lane: input.lane,
        });
  if (!idem) {
    // The message goes out together with the write, not after it: one round trip less on every start.
    // The worker waits a moment for a record it cannot see yet, and drops the message of a failed write.
    const along = input.alongside?.(execution) ?? [];
    const write = along.length ? writeAll([...items.map(putItem), ...along]) : putNew(items);
    const [written, sent] = await Promise.allSettled([write, message()]);
    if (written.status === 'rejected') throw written.reason;
    countRunStarted(execution.accountId, now);
    if (sent.status === 'rejected') await abandonUnsent(ran?.run ?? execution, undefined, sent.reason);
  } else {
    // The key is claimed in the same transaction, and a replay must not send anything: the message waits for the write.
    const requestHash = hashRequest(idem.request);
    const guarded = input.guard ? await input.guard(execution) : [];
    try {
      await writeAll([
        idempotencyPut(workflow.accountId, idem.scope, idem.key, { executionId: execution.executionId, requestHash, createdAt: now }),
        ...items.map(putItem),
        ...(guarded as TransactItem[]),
        ...((input.alongside?.(execution) ?? []) as TransactItem[]),
      ]);
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const earlier = await getIdempotencyRecord(workflow.accountId, idem.scope, idem.key);
      if (!earlier && input.guard) throw new StartGuardFailed('the start guard did not hold');
      if (!earlier || earlier.requestHash !== requestHash) {
        throw conflict(
          'IDEMPOTENCY_KEY_REUSED',
          `This ${idem.label ?? 'Idempotency-Key'} was used with a different request in the last 24 hours.`,
        );
      }
      const first = await getExecution(workflow.accountId, earlier.executionId);
      if (!first) throw notFound('EXECUTION_NOT_FOUND', 'The execution of this Idempotency-Key no longer exists.');
      // The first try may have died between the run's write and its message (a crash, a timeout: its
      // error answer is why this is a retry): a run still waiting for that dispatch gets it now. A message
      // that did arrive claimed the run first, and this one is dropped by the claim, as a duplicate is.
      if ((first.status === 'PENDING' || first.status === 'RUNNING') && first.dispatch && !first.lease)
        await sendRunMessage({
          accountId: first.accountId,
          executionId: first.executionId,
          dispatch: first.dispatch,
          lane: input.lane,
        });
      return { execution: first, replayed: true };
    }
    countRunStarted(execution.accountId, now);
    await message().catch((cause: unknown) => {
      if (!idem.keepUnsent) return abandonUnsent(ran?.run ?? execution, idem, cause);
      logger.warn('run left PENDING for its start to be retried: its message could not be sent', { executionId: execution.executionId });
      throw cause;
    });
  }
  emit('ExecutionStarted');
  // A run that left PENDING in its start counts its trigger here (the worker counts it when it claims a PENDING run).
  if (ran) countAcceptedTrigger(ran.run);
  if (ran && !ran.handedOff) {
    emit(ran.run.status === 'SUCCEEDED' ? 'ExecutionSucceeded' : 'ExecutionFailed');
    countRunChange(execution, ran.run, now);
  } else if (!ran) await notifyTargets(execution, [started]);
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
  const end = finishing(now);
  try {
    await writeAll([
      abandonedStart(e, { status: 'FAILED', error, seq: nextSeq(e), ...end.set }, end.remove),
      eventsPut(e.accountId, [{ ...newEvent(e.executionId, 'execution.failed', { error }, now), seq: nextSeq(e) }]),
      ...(idem ? [idempotencyDelete(e.accountId, idem.scope, idem.key, e.executionId)] : []),
    ]);
    countRunChange(e, { status: 'FAILED', error }, now);
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
 * write from PENDING, so exactly one counts. Off the trigger's hot path, and summed per function
 * instance until its next flush (`counters.ts`, docs/webhooks.md "Stats and key usage"): the counters are items every
 * trigger of a webhook or key would touch.
 */
export function countAcceptedTrigger(e: Execution): void {
  // A retried run leaving PENDING again was counted when it first did.
  if (e.trigger !== 'webhook' || !e.webhookId || e.retries) return;
  const now = Date.now();
  countAccepted(e.webhookId, now);
  if (e.keyId) countKeyUse(e.keyId, now);
}

export const finished = (e: Pick<Execution, 'status'>) => e.status === 'SUCCEEDED' || e.status === 'FAILED' || e.status === 'CANCELLED';
