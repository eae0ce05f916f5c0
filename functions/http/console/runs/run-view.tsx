import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { duration, JsonValue, Status, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import { pathOf } from '../../../../shared/console/run-path.ts';
import { timelineOf } from '../../../../shared/console/run-timeline.ts';
import { currentStepId, type Execution, IN_PROGRESS } from '../../../../shared/domain/read-types.ts';
import { ACTION_BUTTON } from './action-names.ts';
import { allowedActions } from './action-rules.ts';
import type { RunPageData as RunPage } from '../../../../shared/domain/run-console.ts';
import { RunGraph } from './run-graph.tsx';
import { IterationsSection } from './run-iterations.tsx';
import { TimelineSection } from './run-timeline-section.tsx';
import { type RunViewState, runUrl } from './run-url.ts';
import { ArtifactsSection, DeliveriesSection, EventsSection } from './run-log.tsx';
import { StepsSection } from './run-steps.tsx';

const runHref = (id: string) => `/console/runs/${id}`;

/** Who or what started the run, in words. */
function StartedBy({ e, by }: { e: Execution; by: RunPage['startedBy'] }) {
  const who = by ? <> by {by.email ?? `user ${by.userId}`}</> : null;
  switch (e.trigger) {
    case 'webhook':
      return (
        <>
          Webhook <code>{e.webhookId ?? '—'}</code>
          {e.authMode ? ` (${e.authMode.replace('_', ' ')})` : ''}
          {e.sourceIp ? ` from ${e.sourceIp}` : ''}
        </>
      );
    case 'schedule':
      return (
        <>
          Schedule <code>{e.scheduleId ?? '—'}</code>, due <Time ms={e.scheduledAt ?? e.startedAt} />
          {e.manualFire ? ' (fired by hand' : ''}
          {e.manualFire ? who : null}
          {e.manualFire ? ')' : ''}
        </>
      );
    case 'rerun':
      return (
        <>
          Rerun of {e.rerunOf ? <a href={runHref(e.rerunOf)}>{e.rerunOf}</a> : 'a run'}
          {who}
        </>
      );
    default:
      return (
        <>
          API{who}
          {e.keyId ? (
            <>
              {' '}
              with key <code>{e.keyId}</code>
            </>
          ) : null}
        </>
      );
  }
}

function Summary({ data, now }: { data: RunPage; now: number }) {
  const e = data.execution;
  const current = e.status === 'RUNNING' || e.status.startsWith('WAITING') || e.status === 'INTERRUPTED' ? currentStepId(e) : null;
  return (
    <dl class="run-summary">
      <dt>Status</dt>
      <dd>
        <Status value={e.status} />
        {current ? (
          <>
            {' '}
            at step <a href={`#step-${current}`}>{current}</a>
          </>
        ) : null}
        {e.cancelRequested && e.status !== 'CANCELLED' ? (
          <span class="muted"> (cancel requested: it stops before its next step)</span>
        ) : null}
      </dd>
      {data.cancelledBy ? (
        <>
          <dt>Cancelled by</dt>
          <dd id="cancelled-by">
            {data.cancelledBy.kind === 'key' ? (
              <>
                API key <code>{data.cancelledBy.id}</code>
              </>
            ) : (
              (data.cancelledBy.email ?? `user ${data.cancelledBy.id}`)
            )}
            {data.cancelledBy.reason ? <> ({data.cancelledBy.reason})</> : null}
          </dd>
        </>
      ) : null}
      <dt>Workflow</dt>
      <dd>
        <a href={`/console/workflows/${e.workflowId}`}>{data.workflowName ?? e.workflowId}</a>
        {e.workflowVersion !== undefined ? ` · version ${e.workflowVersion}` : ''}
      </dd>
      <dt>Started by</dt>
      <dd>
        <StartedBy e={e} by={data.startedBy} />
      </dd>
      <dt>Started</dt>
      <dd>
        <Time ms={e.startedAt} />
      </dd>
      <dt>{e.finishedAt !== undefined ? 'Finished' : 'Running for'}</dt>
      <dd>
        {e.finishedAt !== undefined ? (
          <>
            <Time ms={e.finishedAt} /> ({duration(e.finishedAt - e.startedAt)})
          </>
        ) : (
          duration(now - e.startedAt)
        )}
      </dd>
      {e.retries ? (
        <>
          <dt>Retried</dt>
          <dd>
            {e.retries === 1 ? 'once' : `${e.retries} times`}
            {data.retriedBy ? ` (last by ${data.retriedBy})` : ''}
          </dd>
        </>
      ) : null}
      {e.interruptedAt !== undefined ? (
        <>
          <dt>Interrupted</dt>
          <dd>
            <Time ms={e.interruptedAt} /> ({e.interruptReason ?? 'restart'})
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** The actions the run allows: each opens its confirmation page (a GET that changes nothing). */
function Actions({ e, now }: { e: Execution; now: number }) {
  const allowed = allowedActions(e, now);
  // A run waiting for its approval: where it is decided (the approval's page says who may).
  const decide = e.status === 'WAITING_APPROVAL' && e.approvalId ? e.approvalId : undefined;
  if (allowed.length === 0 && !decide) return null;
  return (
    <section aria-labelledby="actions">
      <h2 id="actions" class="visually-hidden">
        Actions
      </h2>
      <div class="actions">
        {decide ? (
          <a class="link-button" href={`/console/approvals/${decide}`}>
            Decide
          </a>
        ) : null}
        {allowed.map((a) => (
          <form key={a} method="get" action={`${runHref(e.executionId)}/${a}`}>
            <button type="submit" class={a === 'cancel' ? 'secondary' : undefined}>
              {ACTION_BUTTON[a]}
            </button>
          </form>
        ))}
      </div>
    </section>
  );
}

function Values({ data }: { data: RunPage }) {
  const e = data.execution;
  const href = (part: string) => `${runHref(e.executionId)}/values/${part}`;
  return (
    <section aria-labelledby="values">
      <h2 id="values">Inputs and result</h2>
      <h3>Inputs</h3>
      {data.inputs ? (
        <JsonValue value={data.inputs} label="Inputs" fullHref={href('inputs')} />
      ) : (
        <p class="muted">The inputs as given are no longer in the run's log; its variables are below.</p>
      )}
      <h3>Variables</h3>
      <JsonValue value={e.variables} label="Variables" fullHref={href('variables')} />
      <h3>Output</h3>
      {e.output !== undefined ? (
        <JsonValue value={e.output} label="Output" fullHref={href('output')} />
      ) : (
        <p class="muted">{e.status === 'SUCCEEDED' ? 'None.' : 'None yet: a run has an output once it succeeded.'}</p>
      )}
    </section>
  );
}

export function runPage(session: ConsoleSession, data: RunPage, view: RunViewState = { time: 'real', zoom: 1 }, now = Date.now()) {
  const e = data.execution;
  const timeline = timelineOf(data.log, e.steps);
  // While the run is in progress its summary, actions and timeline refresh themselves (htmx; a reload without scripts).
  const live = IN_PROGRESS.includes(e.status);
  return page(
    { title: `Run ${e.executionId}`, session, section: '/console/runs' },
    <>
      <p>
        <a href="/console/runs">All runs</a>
      </p>
      <div
        id="run-live"
        {...(live
          ? { 'hx-get': runUrl(e.executionId, view, {}), 'hx-trigger': 'every 5s', 'hx-select': '#run-live', 'hx-swap': 'outerHTML' }
          : {})}
      >
        {live ? <p class="muted">The run is in progress: this part of the page updates every 5 seconds.</p> : null}
        <Summary data={data} now={now} />
        <Actions e={e} now={now} />
        {e.error ? (
          <section aria-labelledby="error" class="run-error">
            <h2 id="error">Error</h2>
            <p>
              <code>{e.error.code}</code> {e.error.message}
              {e.error.status !== undefined ? ` (HTTP ${e.error.status})` : ''}
            </p>
          </section>
        ) : null}
        <TimelineSection e={e} bars={timeline.bars} fromStates={timeline.fromStates} view={view} now={now} />
      </div>
      <RunGraph definition={data.definition} path={pathOf(timeline.bars)} bars={timeline.bars} steps={e.steps} />
      <IterationsSection e={e} bars={timeline.bars} exact={!timeline.fromStates} view={view} read={data.iteration} />
      <Values data={data} />
      <StepsSection e={e} definition={data.definition} bars={timeline.bars} now={now} />
      <EventsSection e={e} events={data.events} />
      <ArtifactsSection e={e} artifacts={data.artifacts} />
      <DeliveriesSection e={e} deliveries={data.deliveries} session={session} />
    </>,
  );
}
