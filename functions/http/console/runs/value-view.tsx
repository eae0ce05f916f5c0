import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { page } from '../../../../shared/console/render.tsx';

/**
 * A whole value of a run (what "Show all" loads): its own page without scripts, and the `<pre>`
 * that htmx swaps in place of the cut one where scripts run (`JsonValue`'s `hx-select="pre.value"`).
 */
export const valuePage = (session: ConsoleSession, title: string, back: string, value: unknown) =>
  page(
    { title, session, section: '/console/runs' },
    <>
      <pre class="value" tabindex={0}>
        {JSON.stringify(value, null, 2)}
      </pre>
      <p>
        <a href={back}>Back to the run</a>
      </p>
    </>,
  );
