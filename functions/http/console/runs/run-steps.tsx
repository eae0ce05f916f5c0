import { duration, JsonValue, Status, Time } from '../../../../shared/console/components.tsx';
import { type Bar, barMs } from '../../../../shared/console/run-timeline.ts';
import { type Execution, type NestedStepState, type StepState, TERMINAL } from '../../../../shared/domain/read-types.ts';
import type { WorkflowDefinition } from '../../../../shared/engine/definition.ts';

// Each step of the run: what it was given (its definition in the version the run executes: the run
// records no rendered input), what it gave (its output: of a loop's nested step, the current
// iteration's), its attempts and its error. Large values are cut with "Show all".

type DefinedStep = WorkflowDefinition['steps'][number];

/** A step's definition (top-level or nested) in `definition`, by id. */
export function definedStep(definition: WorkflowDefinition | undefined, stepId: string): Record<string, unknown> | undefined {
  for (const s of definition?.steps ?? []) {
    if (s.id === stepId) return s as Record<string, unknown>;
    const nested = 'steps' in s && Array.isArray(s.steps) ? (s.steps as DefinedStep[]) : [];
    const found = nested.find((n) => n.id === stepId);
    if (found) return found as Record<string, unknown>;
  }
  return undefined;
}

/** What the page shows as a step's input: its definition, a loop's without its nested steps (they have their own). */
export function stepInput(definition: WorkflowDefinition | undefined, stepId: string): unknown {
  const s = definedStep(definition, stepId);
  if (!s) return undefined;
  const { steps: _nested, ...own } = s;
  return own;
}

/** How long a step took: its last execution on the timeline (all its attempts and waits), else its state's last attempt. */
function took(s: StepState | NestedStepState, bar: Bar | undefined, now: number): string | undefined {
  if (bar) return `${duration(barMs(bar, now))}${bar.end === undefined ? ' so far' : ''}`;
  if (s.startedAt === undefined) return undefined;
  return `${duration((s.finishedAt ?? now) - s.startedAt)}${s.finishedAt === undefined ? ' so far' : ''}`;
}

function Facts({ s, bar, now }: { s: StepState | NestedStepState; bar: Bar | undefined; now: number }) {
  const loop = s as StepState;
  return (
    <dl class="step-facts">
      <dt>Started</dt>
      <dd>
        <Time ms={bar?.start ?? s.startedAt} />
      </dd>
      <dt>Took</dt>
      <dd>{took(s, bar, now) ?? '—'}</dd>
      <dt>Attempts</dt>
      <dd>
        {s.tries && s.tries > 1 ? `${s.tries} (its retry policy)` : '1'}
        {s.attempts && s.attempts > 1 ? `; entered ${s.attempts} times (the run was retried)` : ''}
      </dd>
      {s.branch ? (
        <>
          <dt>Branch</dt>
          <dd>
            {s.branch.case === 'default' ? 'default' : `case ${s.branch.case + 1}`} → <a href={`#step-${s.branch.next}`}>{s.branch.next}</a>
          </dd>
        </>
      ) : null}
      {loop.items !== undefined ? (
        <>
          <dt>Items</dt>
          <dd>
            {loop.items}
            {s.status === 'RUNNING' || s.status === 'WAITING' ? `; in iteration ${(loop.iteration ?? 0) + 1}` : ''}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

type Props = { e: Execution; definition: WorkflowDefinition | undefined; bars: readonly Bar[]; now: number };

function StepDetails(props: Props & { s: StepState | NestedStepState; nested?: boolean }) {
  const { e, s, definition, bars, now } = props;
  const bar = bars.findLast((b) => b.stepId === s.stepId);
  const time = took(s, bar, now);
  // A step the run never reached, once the run is over, is not waiting for anything.
  const notRun = s.status === 'PENDING' && TERMINAL.includes(e.status);
  const href = (part: string) => `/console/runs/${e.executionId}/steps/${s.stepId}/${part}`;
  const input = stepInput(definition, s.stepId);
  const output = Object.hasOwn(e.outputs, s.stepId) ? e.outputs[s.stepId] : undefined;
  const inner = (s as StepState).steps;
  return (
    <details id={`step-${s.stepId}`} class="step">
      <summary>
        <strong>{s.stepId}</strong> <span class="muted">{s.type}</span>{' '}
        {notRun ? <span class="muted">not run</span> : <Status value={s.status} />}
        {time ? <span class="muted"> {time}</span> : null}
      </summary>
      <Facts s={s} bar={bar} now={now} />
      {s.error ? (
        <p class="run-error">
          Error <code>{s.error.code}</code> {s.error.message}
          {s.error.status !== undefined ? ` (HTTP ${s.error.status})` : ''}
        </p>
      ) : null}
      <p class="value-label">Input (as defined{e.workflowVersion !== undefined ? ` in version ${e.workflowVersion}` : ''})</p>
      {input !== undefined ? (
        <JsonValue value={input} label={`Input of ${s.stepId}`} fullHref={href('input')} />
      ) : (
        <p class="muted">The definition the run executes is not available.</p>
      )}
      <p class="value-label">Output{props.nested ? ' (of the current or last iteration)' : ''}</p>
      {output !== undefined ? (
        <JsonValue value={output} label={`Output of ${s.stepId}`} fullHref={href('output')} />
      ) : (
        <p class="muted">None.</p>
      )}
      {inner?.length ? (
        <div class="nested-steps">
          {inner.map((n) => (
            <StepDetails key={n.stepId} {...props} s={n} nested />
          ))}
        </div>
      ) : null}
    </details>
  );
}

export function StepsSection(props: Props) {
  const { e } = props;
  return (
    <section aria-labelledby="steps">
      <h2 id="steps">Steps</h2>
      {e.steps.length === 0 ? (
        <p class="muted">The run's steps are known once a worker has picked it up.</p>
      ) : (
        e.steps.map((s) => <StepDetails key={s.stepId} {...props} s={s} />)
      )}
    </section>
  );
}
