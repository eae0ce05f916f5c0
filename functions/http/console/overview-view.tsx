import { Status, Table, Time } from '../../../shared/console/components.tsx';
import { page } from '../../../shared/console/render.tsx';
import type { ConsoleSession } from '../../../shared/console/auth.ts';
import type { executionView } from '../../../shared/domain/executions.ts';

type Run = ReturnType<typeof executionView>;

/** The overview: the latest runs. */
export const overviewPage = (session: ConsoleSession, runs: Run[]) =>
  page(
    { title: 'Overview', session },
    <section>
      <h2>Latest runs</h2>
      {runs.length === 0 ? (
        <p>No runs yet.</p>
      ) : (
        <Table caption="Latest runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Workflow</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.executionId}>
                <td>
                  <a href={`/console/runs/${r.executionId}`}>{r.executionId}</a>
                </td>
                <td>{r.workflowId}</td>
                <td>
                  <Status value={r.status} />
                </td>
                <td>
                  <Time ms={r.startedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <p>
        <a href="/console/runs">All runs</a>
      </p>
    </section>,
  );
