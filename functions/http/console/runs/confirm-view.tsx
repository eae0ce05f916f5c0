import { randomUUID } from 'node:crypto';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Status } from '../../../../shared/console/components.tsx';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import { currentStepId, type Execution } from '../../../../shared/domain/read-types.ts';
import { ACTION_BUTTON, REASON_CHARS, type RunAction } from './action-names.ts';

const TITLES: Record<RunAction, string> = {
  cancel: 'Cancel this run?',
  retry: 'Retry this run?',
  rerun: 'Rerun this run?',
  resume: 'Resume this run?',
};

/** What the action will do to this run, in words. */
function What({ action, e }: { action: RunAction; e: Execution }) {
  const step = currentStepId(e) ?? e.steps[e.nextStep]?.stepId;
  switch (action) {
    case 'cancel':
      return (
        <p>
          The run ends CANCELLED. A pending approval or callback is cancelled with it; a step that is running now is stopped before the next
          one starts.
        </p>
      );
    case 'retry':
      return (
        <p>
          The run goes on from the step that failed
          {step ? (
            <>
              {' '}
              (<code>{step}</code>)
            </>
          ) : null}
          , with the state it had then. The steps before it are not run again.
        </p>
      );
    case 'rerun':
      return <p>A new run of the same workflow starts, as the workflow is now, with this run's inputs. This run stays as it is.</p>;
    case 'resume':
      return (
        <p>
          The interrupted run goes on from the step it stopped in
          {step ? (
            <>
              {' '}
              (<code>{step}</code>)
            </>
          ) : null}
          , or waits again for what it was waiting for.
        </p>
      );
  }
}

/** The confirmation of a run action: a GET page whose form POSTs to the same path with a button of the same name. */
export function confirmPage(session: ConsoleSession, e: Execution, action: RunAction) {
  const runHref = `/console/runs/${e.executionId}`;
  return page(
    { title: TITLES[action], session, section: '/console/runs' },
    <>
      <p>
        Run <a href={runHref}>{e.executionId}</a> of workflow <code>{e.workflowId}</code> is <Status value={e.status} />.
      </p>
      <What action={action} e={e} />
      <form method="post" action={`${runHref}/${action}`}>
        <Csrf session={session} />
        {action === 'cancel' ? (
          <label>
            Reason (optional)
            <input type="text" name="reason" maxLength={REASON_CHARS} autocomplete="off" />
          </label>
        ) : null}
        {action === 'retry' ? <input type="hidden" name="retryKey" value={randomUUID()} /> : null}
        <div class="actions">
          <button type="submit" class={action === 'cancel' ? 'secondary' : undefined}>
            {ACTION_BUTTON[action]}
          </button>
          <a href={runHref}>Back to the run</a>
        </div>
      </form>
    </>,
  );
}
