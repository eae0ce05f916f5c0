import { JsonValue, Table } from '../../../../shared/console/components.tsx';
import { END, edgeKey, START } from '../../../../shared/console/graph-model.ts';
import type { TakenPath } from '../../../../shared/console/graph.tsx';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import type { TestResult } from '../../../../shared/engine/test-run.ts';
import { TESTED_FIELD } from './draft.ts';

// The editor's "Test run": a sample input (JSON, prefilled from the draft's variables' defaults) and
// a button that runs the draft on the test-run engine (shared/engine/test-run.ts), in memory with no
// mocks: nothing is saved, written or sent. The result: status, output or error, the steps executed,
// and the path marked on the draft's graph (`takenOf`) and listed in words.

/** Where the draft is test-run (the button's `formaction`, and htmx's `hx-post`). */
export const TEST_PATH = '/console/workflows/test';
export const TEST_INPUT_FIELD = 'testInput';

/** What the editor shows of a test run: the sample as typed, and the result or why there is none. */
/** A test run's result, or why it was not run. */
export type TestOutcome = { result: TestResult } | { refused: string[] };
/** The outcome as shown, with the digest of the draft text it was for (`testedDigest`). */
export type TestShown = TestOutcome & { tested: string };

/** The sample input a draft starts with: its variables' defaults (a variable without one is left out). */
export const sampleOf = (d: Pick<WorkflowDefinition, 'variables'> | undefined) =>
  JSON.stringify(
    Object.fromEntries(Object.entries(d?.variables ?? {}).flatMap(([k, v]) => (v.default === undefined ? [] : [[k, v.default]]))),
    null,
    2,
  );

/** The path as the graph draws it: the steps executed and the edges between consecutive ones (the graph marks those it has). */
export function takenOf(r: TestResult): TakenPath {
  const steps = [START, ...r.path, ...(r.status === 'SUCCEEDED' ? [END] : [])];
  return { steps: new Set(steps), edges: new Set(steps.slice(1).map((to, i) => edgeKey(steps[i] as string, to))) };
}

/** The sample input and the button (in the editor's form: the button posts the whole draft, with or without script). */
export function TestRunControls({ sample }: { sample: string }) {
  return (
    <section aria-labelledby="test-run-title" class="test-run">
      <h2 id="test-run-title">Test run</h2>
      <p class="muted" id="test-run-hint">
        {'Runs the draft as it is now on the engine, in memory: nothing is saved, written or sent. Steps with effects ('}
        <code>http_request</code>, <code>manual_approval</code>, <code>wait_for_callback</code>
        {") have no mock here, so a test run stops at the first with the engine's error."}
      </p>
      <label for="test-input">Sample input (JSON)</label>
      <textarea id="test-input" name={TEST_INPUT_FIELD} rows={4} spellcheck={false} autocomplete="off" aria-describedby="test-run-hint">
        {sample}
      </textarea>
      <div class="actions">
        <button
          type="submit"
          class="secondary"
          formaction={TEST_PATH}
          formnovalidate
          hx-post={TEST_PATH}
          hx-target="#draft-check"
          hx-swap="innerHTML"
          hx-sync="closest form:replace"
        >
          Test run
        </button>
      </div>
    </section>
  );
}

const where = (s: { id: string; iteration?: number }) => (s.iteration === undefined ? s.id : `${s.id} (item ${s.iteration + 1})`);

/** A test run's result (under the draft's graph, which marks its path). */
export function TestRunResult({ shown }: { shown: TestShown }) {
  if ('refused' in shown)
    return (
      <section id="test-result" aria-labelledby="test-result-title" tabindex={-1}>
        <input type="hidden" name={TESTED_FIELD} value={shown.tested} />
        <h2 id="test-result-title">Test run: not run</h2>
        <ul role="alert" class="draft-errors">
          {shown.refused.map((m, i) => (
            <li key={String(i)}>{m}</li>
          ))}
        </ul>
      </section>
    );
  const r = shown.result;
  return (
    <section id="test-result" aria-labelledby="test-result-title" tabindex={-1}>
      <input type="hidden" name={TESTED_FIELD} value={shown.tested} />
      <h2 id="test-result-title">{`Test run: ${r.status}`}</h2>
      {r.error ? (
        <p role="alert" class="test-error">
          <code>{r.error.code}</code>
          {`: ${r.error.message}`}
        </p>
      ) : null}
      <p>
        {r.path.length ? 'Path (marked on the graph above): ' : 'No step was executed.'}
        {r.path.length ? <span class="test-path">{r.path.join(' → ')}</span> : null}
      </p>
      {r.status === 'SUCCEEDED' ? <JsonValue value={r.output} label="Output of the test run" /> : null}
      {r.steps.length ? (
        <Table caption="Steps the test run executed, in order">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Status</th>
              <th scope="col">Error</th>
            </tr>
          </thead>
          <tbody>
            {r.steps.map((s, i) => (
              <tr key={String(i)}>
                <td>
                  <code>{where(s)}</code>
                </td>
                <td>{s.status}</td>
                <td>{s.error ? `${s.error.code}: ${s.error.message}` : <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
      <p class="muted">Nothing was saved, written or sent.</p>
    </section>
  );
}
