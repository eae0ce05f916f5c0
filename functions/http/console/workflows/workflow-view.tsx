import { JsonValue, RecentRunsTable, Table, Time } from '../../../../shared/console/components.tsx';
import { GraphTable, WorkflowGraph } from '../../../../shared/console/graph.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import type { Workflow } from '../../../../shared/domain/read-types.ts';
import type { executionView } from '../../../../shared/domain/executions.ts';
import type { scheduleView } from '../../../../shared/domain/schedules.ts';
import type { webhookView } from '../../../../shared/domain/webhooks.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { WorkflowScheduleLinks } from '../schedules/list-view.tsx';

/** Runs the workflow's page lists (the runs list, filtered by the workflow, has them all). */
export const RECENT_RUNS = 10;
/** Versions the page lists: the latest ones (all of them on the versions page). */
export const LISTED_VERSIONS = 10;

type Shown = { version: number; definition: WorkflowDefinition };

export type WorkflowPageData = {
  workflow: Workflow;
  /** The definition shown: the current version's, or the one asked for (`?version=`). */
  shown: Shown;
  /** The latest versions, newest first, and the account's users' emails (their authors). */
  versions: VersionEntry[];
  emails: Map<string, string>;
  /** Whether the signed-in user may edit the workflow (its "Edit" link). */
  canEdit: boolean;
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

type VersionEntry = { version: number; createdAt: number | null; createdBy: string | null };

/** The latest versions: who saved each and when ("—" where a version predates that record); all of them on the versions page. */
function Versions({ w, shown, versions, emails }: { w: Workflow; shown: Shown; versions: VersionEntry[]; emails: Map<string, string> }) {
  return (
    <section aria-labelledby="versions">
      <h2 id="versions">Versions</h2>
      <p class="muted">
        Every save keeps its version (runs execute the version they started with).{' '}
        <a href={`${href(w)}/versions`}>
          {w.version > versions.length ? `All ${w.version} versions, and their diffs` : 'Versions and their diffs'}
        </a>
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
          {versions.map(({ version: v, createdAt, createdBy }) => (
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
                <Time ms={createdAt ?? undefined} />
              </td>
              <td>
                {createdBy === null ? <span class="muted">—</span> : (emails.get(createdBy) ?? <span class="muted">a removed user</span>)}
              </td>
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
                <td>
                  <a href={`/console/webhooks/${h.id}`}>{h.name}</a>
                </td>
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
        <RecentRunsTable caption="Recent runs of this workflow, newest first" runs={runs} trigger />
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
      <nav aria-label="Workflow" class="workflow-links">
        <ul>
          <li>
            <a href={`${href(w)}/run`}>Run workflow</a>
          </li>
          {d.canEdit ? (
            <li>
              <a href={`${href(w)}/edit`}>Edit</a>
            </li>
          ) : null}
          <li>
            <a href={`${href(w)}/versions`}>Versions</a>
          </li>
        </ul>
      </nav>
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
        {w.code ? (
          <>
            <dt>Managed by code</dt>
            <dd>
              {'key '}
              <code>{w.code.key}</code>
              {w.code.origin ? (
                <>
                  {', from '}
                  <code>{w.code.origin}</code>
                </>
              ) : null}
              {': change its file and apply it (an edit here drifts from it)'}
            </dd>
          </>
        ) : null}
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
      <Versions w={w} shown={shown} versions={d.versions} emails={d.emails} />
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
