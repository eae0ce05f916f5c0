import { renderToString } from 'preact-render-to-string';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { ASSET } from '../../../../shared/console/asset-names.generated.ts';
import { WorkflowGraph } from '../../../../shared/console/graph.tsx';
import { CONSOLE_HEADERS, Csrf, page } from '../../../../shared/console/render.tsx';
import type { Workflow } from '../../../../shared/domain/read-types.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';
import { SetStep } from '../../../../shared/engine/steps/set.ts';
import type { HttpResult } from '../../../../shared/http/context.ts';
import { definitionOf } from '../../../../shared/engine/versions.ts';
import type { DraftError } from './draft.ts';
import { sampleOf, TestRunControls, TestRunResult, type TestShown, takenOf } from './editor-test.tsx';

/** Where the draft is checked as you type (htmx), saving nothing. */
export const VALIDATE_PATH = '/console/workflows/validate';

/** A new workflow's first definition: one step that sets a variable, to start from. */
export const STARTER = `${JSON.stringify({ steps: [{ id: 'hello', type: SetStep.shape.type.value, values: { greeting: 'Hello' } }] }, null, 2)}\n`;

export type EditorData = {
  /** The workflow edited (absent: a new one). */
  workflow?: Workflow;
  name: string;
  text: string;
  errors: DraftError[];
  /** The draft's definition when its schema holds: its graph. */
  definition?: WorkflowDefinition;
  /** Whether the page answers a refused save (then focus goes to the first error). */
  refused?: boolean;
  /** The test run's sample input as typed (absent: the draft's variables' defaults), and its result. */
  sample?: string;
  test?: TestShown;
};

/** An error's place in the draft: "Line N" (a link to the definition, which the editor's script turns into a caret move), its column. */
function Place({ e }: { e: DraftError }) {
  if (!e.line) return null;
  return (
    <>
      <a href="#wf-definition" class="line-link" data-line={String(e.line)} data-column={e.column ? String(e.column) : undefined}>
        {`Line ${e.line}`}
      </a>
      {e.column ? `, column ${e.column}` : ''}
      {' — '}
    </>
  );
}

/** The id of the graph's drawing: while the draft is broken, htmx keeps the one on the page (`hx-preserve`). */
const GRAPH_ID = 'draft-graph';

/**
 * The draft's graph, or, while the draft does not match the schema, the last valid one: as you type
 * (htmx) the drawing on the page stays (the fragment's placeholder is `hx-preserve`d); a page the server
 * draws with a broken draft (a refused save, no script) shows the saved version's graph, labelled so.
 */
function DraftGraph({
  definition,
  saved,
  test,
}: {
  definition?: WorkflowDefinition | undefined;
  saved?: Workflow | undefined;
  test?: TestShown | undefined;
}) {
  const ran = test && 'result' in test ? test.result : undefined;
  if (definition)
    return (
      <section aria-labelledby="draft-graph-title">
        <h2 id="draft-graph-title">Graph of the draft</h2>
        <div id={GRAPH_ID} class="graph-wrap">
          <WorkflowGraph
            definition={definition}
            label={ran ? `Graph of the draft with the test run's path: ${ran.path.join(', ')}` : 'Graph of the draft'}
            {...(ran ? { taken: takenOf(ran) } : {})}
          />
        </div>
      </section>
    );
  const none = <p class="muted">No valid draft yet: the graph is drawn once the definition is valid JSON that matches the schema.</p>;
  if (saved)
    return (
      <section aria-labelledby="draft-graph-title">
        <h2 id="draft-graph-title">{`Graph of the saved version (${saved.version}): the draft has errors`}</h2>
        <div id={GRAPH_ID} class="graph-wrap">
          <WorkflowGraph definition={definitionOf(saved.definition)} label={`Graph of version ${saved.version}`} />
        </div>
      </section>
    );
  return (
    <section aria-labelledby="draft-graph-title">
      <h2 id="draft-graph-title">Graph of the last valid draft</h2>
      <div id={GRAPH_ID} class="graph-wrap" hx-preserve="true">
        {none}
      </div>
    </section>
  );
}

/**
 * The draft's errors and graph: the part of the page the validate route answers alone (htmx swaps it
 * in as you type). `focus`: a refused save's page moves focus to the list. `saved`: the workflow whose
 * saved graph a page drawn with a broken draft shows (absent in the live check: the page keeps its own).
 */
export function DraftCheck({
  errors,
  definition,
  focus,
  test,
  saved,
}: {
  errors: DraftError[];
  definition?: WorkflowDefinition | undefined;
  focus?: boolean;
  test?: TestShown | undefined;
  saved?: Workflow | undefined;
}) {
  const listed = errors.filter((e) => e.field !== 'name');
  return (
    <>
      <section id="draft-errors" aria-labelledby="draft-errors-title" tabindex={-1} autofocus={focus || undefined}>
        {listed.length ? (
          <>
            <h2 id="draft-errors-title" class="error-title">
              {listed.length === 1 ? '1 error in the definition' : `${listed.length} errors in the definition`}
            </h2>
            <ul class="draft-errors">
              {listed.map((e, i) => (
                <li key={String(i)}>
                  <Place e={e} />
                  {e.field === 'form' ? null : <code>{e.path}</code>}
                  {e.field === 'form' ? e.message : `: ${e.message}`}
                </li>
              ))}
            </ul>
          </>
        ) : (
          <h2 id="draft-errors-title" class="ok-title">
            No errors: the definition is valid
          </h2>
        )}
      </section>
      <DraftGraph definition={definition} saved={saved} test={test} />
      {test ? <TestRunResult shown={test} /> : null}
    </>
  );
}

/** The validate route's answer: the check alone (an HTML fragment, never cached). */
export function draftFragment(errors: DraftError[], definition: WorkflowDefinition | undefined, test?: TestShown): HttpResult {
  return {
    statusCode: 200,
    headers: { ...CONSOLE_HEADERS },
    body: renderToString(<DraftCheck errors={errors} definition={definition} test={test} />),
  };
}

/** The form field a save of a workflow managed by code needs (the editor's checkbox): the person knows it drifts. */
export const DRIFT_FIELD = 'drift';

/**
 * A workflow managed by code (docs/workflows-as-code.md): where it comes from, that an edit here
 * drifts from its files (their next apply replaces it), and the confirmation a save needs.
 */
function DriftNotice({ code }: { code: NonNullable<Workflow['code']> }) {
  return (
    <section class="notice" aria-labelledby="drift-title">
      <h2 id="drift-title">Managed by code</h2>
      <p>
        {'This workflow is applied from the file with key '}
        <code>{code.key}</code>
        {code.origin ? (
          <>
            {' ('}
            <code>{code.origin}</code>
            {')'}
          </>
        ) : null}
        {'. An edit here drifts from that file: the next '}
        <code>flowgate apply</code>
        {' of its folder replaces it. Change the file instead where you can.'}
      </p>
      <label>
        <input type="checkbox" name={DRIFT_FIELD} value="yes" required />
        {' Save anyway: I know this edit drifts from the code'}
      </label>
    </section>
  );
}

/** The editor: "Name", "Definition" (checked as you type where scripts run), "Save". */
export function editorPage(session: ConsoleSession, d: EditorData, status = 200) {
  const w = d.workflow;
  const action = w ? `/console/workflows/${w.workflowId}/edit` : '/console/workflows/new';
  const nameError = d.errors.find((e) => e.field === 'name');
  const definitionInvalid = d.errors.some((e) => e.field !== 'name');
  return page(
    { title: w ? `Edit ${w.name}` : 'New workflow', session, section: '/console/workflows', status, scripts: [ASSET['editor.js']] },
    <form method="post" action={action} class="editor">
      <Csrf session={session} />
      {w ? <input type="hidden" name="workflowId" value={w.workflowId} /> : null}
      {w ? <input type="hidden" name="version" value={String(w.version)} /> : null}
      {w ? (
        <p class="muted">
          {`Saving makes version ${w.version + 1}; version ${w.version} stays as it is (runs execute the version they started with). `}
          <a href={`/console/workflows/${w.workflowId}/versions`}>Versions</a>
        </p>
      ) : null}
      {w?.code ? <DriftNotice code={w.code} /> : null}
      <label for="wf-name">Name</label>
      <input
        id="wf-name"
        name="name"
        type="text"
        value={d.name}
        maxlength={200}
        required
        autocomplete="off"
        aria-invalid={nameError ? 'true' : undefined}
        aria-describedby={nameError ? 'wf-name-error' : undefined}
        autofocus={(d.refused && nameError !== undefined) || undefined}
      />
      {nameError ? (
        <small id="wf-name-error" class="hint error">
          {nameError.message}
        </small>
      ) : null}
      <label for="wf-definition" id="wf-definition-label">
        Definition
      </label>
      <textarea
        id="wf-definition"
        name="definition"
        class="code-editor"
        rows={24}
        spellcheck={false}
        autocomplete="off"
        autocapitalize="off"
        wrap="off"
        aria-describedby="wf-definition-hint draft-errors"
        aria-invalid={definitionInvalid ? 'true' : undefined}
        hx-post={VALIDATE_PATH}
        hx-trigger="input changed delay:500ms"
        hx-target="#draft-check"
        hx-swap="innerHTML"
        hx-sync="closest form:queue last"
      >
        {d.text}
      </textarea>
      <small id="wf-definition-hint" class="muted hint">
        The definition as JSON, checked by the server as you type: each error names its line and path. With script, an editor with line
        numbers, completion (Ctrl+Space) and hints from the schema; Tab leaves it.
      </small>
      <div id="draft-check" aria-live="polite">
        <DraftCheck errors={d.errors} definition={d.definition} focus={d.refused && !nameError} test={d.test} saved={w} />
      </div>
      <TestRunControls sample={d.sample ?? sampleOf(d.definition)} />
      <div class="actions">
        <button type="submit">Save</button>
        <a href={w ? `/console/workflows/${w.workflowId}` : '/console/workflows'}>Cancel</a>
      </div>
    </form>,
  );
}
