import type { ComponentChildren } from 'preact';
import { Time } from '../http/time.tsx';

// Small pieces several pages use. Each renders through Preact (escaped by construction).

/** A status word, coloured by class (console.css), never by colour alone: the word is the meaning. */
export const Status = ({ value }: { value: string }) => <span class={`status status-${value}`}>{value}</span>;

/** A time as UTC text in a `<time>` element (shared with the approval link pages). */
export { Time };

/** How long, in words a person reads at a glance: 850 ms, 12 s, 4 min 10 s, 3 h 5 min, 2 d 4 h. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ''}`;
}

/** A run's id, linked to its page (monospace, as ids are). */
export const RunLink = ({ id }: { id: string }) => (
  <a href={`/console/runs/${id}`} class="run-id">
    {id}
  </a>
);

/** A table that scrolls sideways on a narrow screen instead of breaking the page. */
export const Table = ({ caption, children }: { caption?: string; children: ComponentChildren }) => (
  // Focusable, so a keyboard can scroll a table wider than the screen (axe: scrollable-region-focusable).
  <section class="table-wrap" tabindex={0} aria-label={caption ?? 'Table'}>
    <table>
      {caption ? <caption class="visually-hidden">{caption}</caption> : null}
      {children}
    </table>
  </section>
);

/**
 * A drawing (an SVG) at a readable size: on a screen narrower than it, it scrolls sideways instead of
 * shrinking its text below 11 CSS px (console.css `.svg-scroll`). Focusable, so a keyboard can scroll it.
 */
export const ScrollX = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <section class="svg-scroll" tabindex={0} aria-label={label}>
    {children}
  </section>
);

/** The "Next page" link of a cursor-paged list: the same query with the cursor of the page after. */
export function NextPage({ path, query, cursor }: { path: string; query: Record<string, string | undefined>; cursor: string | null }) {
  if (!cursor) return null;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '' && k !== 'cursor') params.set(k, v);
  params.set('cursor', cursor);
  return (
    <p>
      <a href={`${path}?${params}`}>Next page</a>
    </p>
  );
}

/** Characters of a value shown before it is cut (the rest loads on demand: "Show all"). */
export const VALUE_PREVIEW_CHARS = 2000;

/**
 * A JSON value in a `<pre>`, cut at `VALUE_PREVIEW_CHARS` with a "Show all" link to `fullHref` (a page
 * with the whole value; htmx swaps it in place where scripts run). Large step outputs never freeze a page.
 */
export function JsonValue({ value, fullHref, label }: { value: unknown; fullHref?: string; label: string }) {
  const text = value === undefined ? '' : JSON.stringify(value, null, 2);
  const cut = text.length > VALUE_PREVIEW_CHARS;
  return (
    <section aria-label={label}>
      <pre class="value" tabindex={0}>
        {cut ? `${text.slice(0, VALUE_PREVIEW_CHARS)}…` : text}
      </pre>
      {cut && fullHref ? (
        <p>
          <a href={fullHref} hx-get={fullHref} hx-select="pre.value" hx-target="previous pre" hx-swap="outerHTML">
            Show all
          </a>{' '}
          <span class="muted">({text.length.toLocaleString('en')} characters)</span>
        </p>
      ) : null}
    </section>
  );
}

type RecentRun = { executionId: string; status: string; startedAt: number | undefined; trigger?: string };

/** A few runs as a table: each run's link, status, trigger (with `trigger`) and start. */
export const RecentRunsTable = ({ caption, runs, trigger = false }: { caption: string; runs: readonly RecentRun[]; trigger?: boolean }) => (
  <Table caption={caption}>
    <thead>
      <tr>
        <th scope="col">Run</th>
        <th scope="col">Status</th>
        {trigger ? <th scope="col">Trigger</th> : null}
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
          {trigger ? <td>{r.trigger}</td> : null}
          <td>
            <Time ms={r.startedAt} />
          </td>
        </tr>
      ))}
    </tbody>
  </Table>
);
