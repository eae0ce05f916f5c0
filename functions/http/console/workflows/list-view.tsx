import { NextPage, Table, Time } from '../../../../shared/console/components.tsx';
import { page } from '../../../../shared/console/render.tsx';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import type { Workflow } from '../../../../shared/domain/read-types.ts';

/** Workflows a page of the list shows. */
export const WORKFLOWS_PAGE = 25;
/** A description is cut here in the list (in full on the workflow's page). */
const DESCRIPTION_CHARS = 160;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The workflows list: each row links to its workflow's page; "Next page" while there are more. */
export const workflowsPage = (
  session: ConsoleSession,
  workflows: Workflow[],
  query: { cursor?: string | undefined },
  nextCursor: string | null,
) =>
  page(
    { title: 'Workflows', session, section: '/console/workflows' },
    <section>
      <p>
        <a href="/console/workflows/new">New workflow</a>
      </p>
      {workflows.length === 0 ? (
        <p>{query.cursor ? 'No more workflows.' : 'No workflows yet.'}</p>
      ) : (
        <Table caption="Workflows, newest first">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Version</th>
              <th scope="col">Updated</th>
              <th scope="col">Description</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {workflows.map((w) => (
              <tr key={w.workflowId}>
                <td>
                  <a href={`/console/workflows/${w.workflowId}`} id={`wf-${w.workflowId}`}>
                    {w.name}
                  </a>
                </td>
                <td>
                  <code>{w.workflowId}</code>
                </td>
                <td>{w.version}</td>
                <td>
                  <Time ms={w.updatedAt} />
                </td>
                <td>{w.description ? cut(w.description, DESCRIPTION_CHARS) : <span class="muted">—</span>}</td>
                <td>
                  {/* Every row's link has the same name; the workflow's name describes it. */}
                  <a href={`/console/workflows/${w.workflowId}/run`} aria-describedby={`wf-${w.workflowId}`}>
                    Run workflow
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <NextPage path="/console/workflows" query={{}} cursor={nextCursor} />
    </section>,
  );
