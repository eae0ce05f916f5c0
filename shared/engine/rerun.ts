// Rerun: its own module, so that what starts runs (the trigger's bundle) holds no audit code.
import { audited, type Via } from '../db/audited.ts';
import { getExecution } from '../db/entities/execution.ts';
import { listEvents } from '../db/entities/run-events.ts';
import { getWorkflow } from '../db/entities/workflow.ts';
import { conflict, notFound } from '../errors.ts';
import { finished, startRun } from './runs.ts';

/**
 * Rerun (v1): a new execution of the run's workflow, as it is now, with the inputs the run was started
 * with (defaults applied afresh), `rerunOf` pointing back. Only a run that has stopped (finished or
 * INTERRUPTED) is rerun: two copies of a run in progress are never started by accident.
 */
export async function rerunRun(accountId: string, executionId: string, by: { userId: string; keyId?: string; kind?: string; via?: Via }) {
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
    // The rerun is on the audit log, in the new run's transaction.
    alongside: (started) => [
      audited({ accountId, ...by }, 'run.rerun', { type: 'run', id: executionId }, { newExecutionId: started.executionId }),
    ],
  });
}
