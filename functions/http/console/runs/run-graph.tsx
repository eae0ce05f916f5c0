import { WorkflowGraph } from '../../../../shared/console/graph.tsx';
import { edgeKey, START } from '../../../../shared/console/graph-model.ts';
import type { TakenPath } from '../../../../shared/console/run-path.ts';
import type { Bar } from '../../../../shared/console/run-timeline.ts';
import type { StepState } from '../../../../shared/domain/read-types.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';

/** The run's path as the graph draws it: its steps and edges, from the start. */
const drawn = (path: TakenPath) => ({
  steps: new Set([START, ...path.steps]),
  edges: new Set([
    ...(path.steps[0] !== undefined ? [edgeKey(START, path.steps[0])] : []),
    ...path.edges.map((e) => edgeKey(e.from, e.to)),
  ]),
});

/**
 * Each step's status in the run, for its node: FAILED if any execution of it failed (an iteration, an
 * attempt the run went on from), else its last execution's on the timeline, else its state's (a step
 * skipped by its `when`; PENDING: not reached).
 */
export function stepStatuses(bars: readonly Bar[], steps: readonly StepState[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of steps) {
    out.set(s.stepId, s.status);
    for (const n of s.steps ?? []) out.set(n.stepId, n.status);
  }
  const failed = new Set(bars.filter((b) => b.status === 'FAILED').map((b) => b.stepId));
  for (const b of bars) out.set(b.stepId, failed.has(b.stepId) ? 'FAILED' : b.status);
  return out;
}

/**
 * The run's path through its workflow: the workflow's graph (shared/console/graph.tsx) with the steps
 * and edges the run went along drawn as taken (`takenPath`, shared/console/run-path.ts), and the same
 * path as a list in order, each step linked to its details.
 */
export function RunGraph({
  definition,
  path,
  bars,
  steps,
}: {
  definition: WorkflowDefinition | undefined;
  path: TakenPath;
  bars: readonly Bar[];
  steps: readonly StepState[];
}) {
  const statuses = stepStatuses(bars, steps);
  return (
    <section aria-labelledby="path" id="graph">
      <h2 id="path">Path</h2>
      {path.steps.length === 0 ? (
        <p class="muted">The run has not entered a step yet.</p>
      ) : (
        <>
          {definition ? (
            <div class="graph-wrap">
              <WorkflowGraph
                definition={definition}
                taken={drawn(path)}
                statuses={statuses}
                label={`The workflow's graph with the run's path and each step's status: ${path.steps.join(', ')}`}
              />
            </div>
          ) : null}
          <ol class="run-path" aria-label="Steps the run went through, in order">
            {path.steps.map((id) => (
              <li key={id}>
                <a href={`#step-${id}`}>{id}</a>
              </li>
            ))}
          </ol>
          {definition ? (
            <p class="muted">
              {
                'Each step shows its status by colour and in words (✓ succeeded, ✗ failed, ▶ running, ‖ waiting, ↷ skipped, ○ not reached); select one for its details. '
              }
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
