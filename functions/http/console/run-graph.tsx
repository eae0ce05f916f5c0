import type { TakenPath } from '../../../shared/console/run-path.ts';
import type { WorkflowDefinition } from '../../../shared/engine/definition.ts';

/**
 * The run's path through its workflow.
 *
 * >>> THE WORKFLOW GRAPH GOES HERE. <<< When `WorkflowGraph` (shared/console/graph.tsx, the workflows
 * pages' SVG of a definition) is on main, draw it here with the run's path on it:
 *   <WorkflowGraph definition={definition} taken={path} />
 * `path` is `takenPath` / `pathOf` (shared/console/run-path.ts): the step ids visited and the edges
 * taken. Until then the path is listed in order, each step linked to its details.
 */
export function RunGraph({ definition, path }: { definition: WorkflowDefinition | undefined; path: TakenPath }) {
  return (
    <section aria-labelledby="path" id="graph">
      <h2 id="path">Path</h2>
      {path.steps.length === 0 ? (
        <p class="muted">The run has not entered a step yet.</p>
      ) : (
        <>
          <ol class="run-path" aria-label="Steps the run went through, in order">
            {path.steps.map((id) => (
              <li key={id}>
                <a href={`#step-${id}`}>{id}</a>
              </li>
            ))}
          </ol>
          {definition ? (
            <p class="muted">
              {`${path.steps.length} of the workflow's ${countSteps(definition)} steps, along ${path.edges.length} ${path.edges.length === 1 ? 'edge' : 'edges'}.`}
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

const countSteps = (d: WorkflowDefinition) =>
  d.steps.reduce((n, s) => n + 1 + ('steps' in s && Array.isArray(s.steps) ? s.steps.length : 0), 0);
