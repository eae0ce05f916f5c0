import { JsonValue, RunLink, Status, Table, Time } from '../../../shared/console/components.tsx';
import { GraphTable, WorkflowGraph } from '../../../shared/console/graph.tsx';
import { page } from '../../../shared/console/render.tsx';
import type { ConsoleSession } from '../../../shared/console/auth.ts';
import type { Workflow } from '../../../shared/db/entities/workflow.ts';
import type { executionView } from '../../../shared/domain/executions.ts';
import type { scheduleView } from '../../../shared/domain/schedules.ts';
import type { webhookView } from '../../../shared/domain/webhooks.ts';
import type { WorkflowDefinition } from '../../../shared/engine/definition.ts';
import { WorkflowScheduleLinks } from './schedules-view.tsx';

/** Runs the workflow's page lists (the runs list, filtered by the workflow, has them all). */
export const RECENT_RUNS = 10;
/** Versions the page lists: the latest ones, and the first. */
const LISTED_VERSIONS = 10;

type Shown = { version: number; definition: WorkflowDefinition };

export type WorkflowPageData = {
  workflow: Workflow;
  /** The definition shown: the current version's, or the one asked for (`?version=`). */
  shown: Shown;
  /** The owner's email (who saved the first version), if the user still exists. */
  owner: string | undefined;
  webhooks: ReturnType<typeof webhookView>[];
  schedules: ReturnType<typeof scheduleView>[];
  runs: ReturnType<typeof executionView>[];
  moreRuns: boolean;
};

const href = (w: Workflow, query: Record<string, string> = {}) => {
  const q = new URLSearchParams(query).toString();
  return `/console/workflows/${w.workflowId}${q ? `?${q}` : ''}`;
};
const definitionHref = (w: Workflow, shown: Shown) =>
  href(w, { ...(shown.version !== w.version ? { version: String(shown.version) } : {}), definition: 'full' });

const None = ({ children }: { children: string }) => <p class="muted">{children}</p>;

/** Who saved a version and when, as far as it is recorded: the first's author and time, the latest save's time. */
function Versions({ w, shown, owner }: { w: Workflow; shown: Shown; owner: string | undefined }) {
  const latest = Array.from({ length: Math.min(LISTED_VERSIONS, w.version) }, (_, i) => w.version - i);
  const listed = latest.includes(1) ? latest : [...latest, 1];
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <p class="muted">
        Every save keeps its version (runs execute the version they started with).
        {w.version > 1
          ? ' Who saved each later version, and when, is not recorded: only the first version’s author and the latest save’s time are.'
          : ''}
        {w.version > listed.length ? ` ${w.version - listed.length} earlier versions are not listed; open one with ?version=<number>.` : ''}
      </p>
      <Table caption="Versions, newest first">
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Saved</th>
            <th scope="col">By</th>
          </tr>
        </thead>
        <tbody>
          {listed.map((v) => (
            <tr key={v}>
              <td>
                {v === shown.version ? (
                  <strong aria-current="page">{`Version ${v}`}</strong>
                ) : (
                  <a href={v === w.version ? href(w) : href(w, { version: String(v) })}>{`Version ${v}`}</a>
                )}
                {v === w.version ? <span class="muted"> (current)</span> : null}
              </td>
              <td>
                {v === w.version ? (
                  <Time ms={w.updatedAt} />
                ) : v === 1 ? (
                  <Time ms={w.createdAt} />
                ) : (
                  <span class="muted">not recorded</span>
                )}
              </td>
              <td>{v === 1 ? (owner ?? <span class="muted">a removed user</span>) : <span class="muted">not recorded</span>}</td>
            </tr>
          ))}
        </tbody>
      </Table>
    </section>
  );
}

function Webhooks({ webhooks, admin }: { webhooks: WorkflowPageData['webhooks']; admin: boolean }) {
  return (
    <section aria-labelledby="webhooks">
      <h2 id="webhooks">Webhooks</h2>
      {admin ? null : <p class="muted">Members see the webhooks they created.</p>}
      {webhooks.length === 0 ? (
        <None>No webhooks start this workflow.</None>
      ) : (
        <Table caption="Webhooks that start this workflow">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Enabled</th>
              <th scope="col">Auth mode</th>
            </tr>
          </thead>
          <tbody>
            {webhooks.map((h) => (
              <tr key={h.id}>
                <td>{h.name}</td>
                <td>
                  <code>{h.id}</code>
                </td>
                <td>{h.enabled ? 'Enabled' : 'Disabled'}</td>
                <td>{h.authMode}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}

function Schedules({ schedules }: { schedules: WorkflowPageData['schedules'] }) {
  return (
    <section aria-labelledby="schedules">
      <h2 id="schedules">Schedules</h2>
      {schedules.length === 0 ? (
        <None>No schedules start this workflow.</None>
      ) : (
        <Table caption="Schedules that start this workflow">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Expression</th>
              <th scope="col">Timezone</th>
              <th scope="col">Enabled</th>
              <th scope="col">Next fire</th>
            </tr>
          </thead>
          <tbody>
            {schedules.map((s) => (
              <tr key={s.id}>
                <td>{s.name}</td>
                <td>
                  <code>{s.expression}</code>
                </td>
                <td>{s.timezone}</td>
                <td>{s.enabled ? 'Enabled' : 'Disabled'}</td>
                <td>
                  {s.nextFireTimes[0] ? <time datetime={s.nextFireTimes[0]}>{s.nextFireTimes[0]}</time> : <span class="muted">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}

function Runs({ w, runs, more }: { w: Workflow; runs: WorkflowPageData['runs']; more: boolean }) {
  const all = `/console/runs?${new URLSearchParams({ workflowId: w.workflowId })}`;
  return (
    <section aria-labelledby="runs">
      <h2 id="runs">Recent runs</h2>
      {runs.length === 0 ? (
        <None>No runs yet.</None>
      ) : (
        <Table caption="Recent runs of this workflow, newest first">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.executionId}>
                <td>
                  <RunLink id={r.executionId} />
                </td>
                <td>
                  <Status value={r.status} />
                </td>
                <td>{r.trigger}</td>
                <td>
                  <Time ms={r.startedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {runs.length > 0 ? (
        <p>
          <a href={all}>{more ? 'All runs of this workflow' : 'These runs in the runs list'}</a>
        </p>
      ) : null}
    </section>
  );
}

/** A workflow's page: what it is, its graph and JSON (of the version shown), its versions, what starts it, its recent runs. */
export function workflowPage(session: ConsoleSession, d: WorkflowPageData) {
  const { workflow: w, shown } = d;
  const old = shown.version !== w.version;
  return page(
    { title: w.name, session, section: '/console/workflows' },
    <>
      <dl class="workflow-facts">
        <dt>Id</dt>
        <dd>
          <code>{w.workflowId}</code>
        </dd>
        <dt>Version</dt>
        <dd>{old ? `${shown.version} (shown) · ${w.version} (current)` : String(w.version)}</dd>
        <dt>Updated</dt>
        <dd>
          <Time ms={w.updatedAt} />
        </dd>
        <dt>Description</dt>
        <dd>{w.description ?? <span class="muted">—</span>}</dd>
      </dl>
      {old ? (
        <p role="status">
          {`This is version ${shown.version}, not the current one. `}
          <a href={href(w)}>{`Show the current version (${w.version})`}</a>
        </p>
      ) : null}
      <section aria-labelledby="graph">
        <h2 id="graph">Graph</h2>
        <div class="graph-wrap">
          <WorkflowGraph definition={shown.definition} label={`Graph of ${w.name}, version ${shown.version}`} />
        </div>
        <details>
          <summary>The graph as a table</summary>
          <GraphTable definition={shown.definition} caption={`Steps of version ${shown.version} and where a run goes from each`} />
        </details>
      </section>
      <section aria-labelledby="definition">
        <h2 id="definition">Definition</h2>
        <JsonValue value={shown.definition} fullHref={definitionHref(w, shown)} label={`Definition of version ${shown.version} as JSON`} />
      </section>
      <Versions w={w} shown={shown} owner={d.owner} />
      <Webhooks webhooks={d.webhooks} admin={session.principal.role === 'admin'} />
      <Schedules schedules={d.schedules} />
      <WorkflowScheduleLinks workflowId={w.workflowId} />
      <Runs w={w} runs={d.runs} more={d.moreRuns} />
    </>,
  );
}

/** The definition's JSON alone and in full (what "Show all" loads into the workflow's page). */
export const definitionPage = (session: ConsoleSession, w: Workflow, shown: Shown) =>
  page(
    { title: `${w.name}: definition of version ${shown.version}`, session, section: '/console/workflows' },
    <>
      <section aria-label={`Definition of version ${shown.version} as JSON`}>
        <pre class="value" tabindex={0}>
          {JSON.stringify(shown.definition, null, 2)}
        </pre>
      </section>
      <p>
        <a href={href(w, shown.version !== w.version ? { version: String(shown.version) } : {})}>{`Back to ${w.name}`}</a>
      </p>
    </>,
  );
