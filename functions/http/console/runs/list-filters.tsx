import type { ComponentChildren } from 'preact';
import type { WorkflowName as Choice } from '../../../../shared/domain/read-types.ts';
import { STATUS_ORDER } from '../../../../shared/console/runs-components.tsx';
import { RUN_TRIGGERS } from '../../../../shared/domain/run-list.ts';
import { described, FormAlert, firstInvalid } from '../parts/labelled-field.tsx';
import { DEFAULT_LIMIT, PATH, type RunsView } from './list-parts.tsx';

/** A time as a `datetime-local` field holds it (UTC, no zone; seconds and milliseconds only when not zero). */
const fieldTime = (ms: number | undefined) => {
  if (ms === undefined) return '';
  const s = new Date(ms).toISOString().slice(0, 23);
  return s.endsWith(':00.000') ? s.slice(0, 16) : s.endsWith('.000') ? s.slice(0, 19) : s;
};

const ORDER = ['workflowId', 'status', 'trigger', 'from', 'to'] as const;

/** A filter: its label, its control (given `described(...)`'s attributes) and its error beneath it. */
const Filter = ({
  name,
  label,
  error,
  when,
  children,
}: {
  name: string;
  label: string;
  error: string | undefined;
  when?: boolean;
  children: ComponentChildren;
}) => (
  <div class={when ? 'filter when' : 'filter'}>
    <label for={`runs-${name}`}>{label}</label>
    {children}
    {error ? (
      <small id={`runs-${name}-error`} class="hint error">
        {error}
      </small>
    ) : null}
  </div>
);

/**
 * The filters: a GET form whose fields are rendered from the URL's query, so they always show the
 * list's filters: on reload and on Back too (`autocomplete="off"`: the browser does not put back
 * what was chosen and not sent; console.js resets the form when a page comes back from the
 * back-forward cache). A wrong filter is marked at its field (`aria-invalid`, its error beneath it).
 */
export function Filters({ v, choices }: { v: RunsView; choices: readonly Choice[] }) {
  const f = v.filters;
  const e = v.errors.fields;
  const focus = firstInvalid(v.errors, ORDER);
  const attrs = (name: (typeof ORDER)[number]) => described(`runs-${name}`, e[name], false, focus === name);
  const listed = f.workflowId === undefined || choices.some((c) => c.workflowId === f.workflowId);
  return (
    <>
      <FormAlert errors={v.errors} what="The list cannot show these filters." />
      <form method="get" action={PATH} class="filters runs-filters" aria-label="Filter runs" autocomplete="off" data-url-state>
        <Filter name="workflowId" label="Workflow" error={e.workflowId}>
          <select name="workflowId" {...attrs('workflowId')}>
            <option value="">All workflows</option>
            {choices.map((c) => (
              <option key={c.workflowId} value={c.workflowId} selected={c.workflowId === f.workflowId}>
                {c.name}
              </option>
            ))}
            {listed ? null : (
              <option value={f.workflowId} selected>
                {v.names.get(f.workflowId as string) ?? f.workflowId}
              </option>
            )}
          </select>
        </Filter>
        <Filter name="status" label="Status" error={e.status}>
          <select name="status" {...attrs('status')}>
            <option value="">Any status</option>
            {STATUS_ORDER.map((s) => (
              <option key={s} value={s} selected={s === f.status}>
                {s}
              </option>
            ))}
          </select>
        </Filter>
        <Filter name="trigger" label="Trigger" error={e.trigger}>
          <select name="trigger" {...attrs('trigger')}>
            <option value="">Any trigger</option>
            {RUN_TRIGGERS.map((t) => (
              <option key={t} value={t} selected={t === f.trigger}>
                {t}
              </option>
            ))}
          </select>
        </Filter>
        <Filter name="from" label="From (UTC)" error={e.from} when>
          <input type="datetime-local" name="from" step="any" value={fieldTime(f.from)} {...attrs('from')} />
        </Filter>
        <Filter name="to" label="To (UTC)" error={e.to} when>
          <input type="datetime-local" name="to" step="any" value={fieldTime(f.to)} {...attrs('to')} />
        </Filter>
        {v.limit === DEFAULT_LIMIT ? null : <input type="hidden" name="limit" value={String(v.limit)} />}
        {v.live ? null : <input type="hidden" name="live" value="0" />}
        <button type="submit">Filter</button>
      </form>
    </>
  );
}
