// Which of a run's actions the API allows for the run as it is: the engine's own refusals (409), so
// the page offers only what the server would do; the server refuses the rest anyway.
import { type Execution, TERMINAL } from '../../../../shared/domain/read-types.ts';
import { retryRefusal } from '../../../../shared/engine/retry-failed-run.ts';
import { type AppError, conflict } from '../../../../shared/errors.ts';
import { RUN_ACTIONS, type RunAction } from './action-names.ts';

const finished = (e: Execution) => TERMINAL.includes(e.status);

/** Why `action` cannot be done on `e` now (the engine's own 409), or nothing. */
export function actionRefusal(action: RunAction, e: Execution, now = Date.now()): AppError | undefined {
  switch (action) {
    case 'cancel':
      return finished(e) ? conflict('EXECUTION_FINISHED', `Execution ${e.executionId} is already ${e.status}.`) : undefined;
    case 'retry':
      return retryRefusal(e, now);
    case 'rerun':
      return finished(e) || e.status === 'INTERRUPTED'
        ? undefined
        : conflict('EXECUTION_IN_PROGRESS', `Execution ${e.executionId} is ${e.status}; rerun it once it has finished or was interrupted.`);
    case 'resume':
      return e.status === 'INTERRUPTED'
        ? undefined
        : conflict('EXECUTION_NOT_INTERRUPTED', `Execution ${e.executionId} is ${e.status}; only an INTERRUPTED run can be resumed.`);
  }
}

/** The actions the run allows now, in the page's order. */
export const allowedActions = (e: Execution, now = Date.now()) => RUN_ACTIONS.filter((a) => !actionRefusal(a, e, now));
