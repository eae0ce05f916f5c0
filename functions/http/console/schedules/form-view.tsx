import { renderToString } from 'preact-render-to-string';
import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { Csrf, page } from '../../../../shared/console/render.tsx';
import type { FieldError } from '../../../../shared/errors.ts';
import { described, Field, type FormErrors, FormAlert, firstInvalid } from '../parts/labelled-field.tsx';

// "Create schedule": the form (no script needed: "Preview" is a submit of its own), and the preview of
// the next fire times (the same section the live preview swaps in as you type: /console/schedules/preview).

/** The form's fields, in their order (the first with an error gets the focus). */
export const SCHEDULE_FIELDS = ['workflowId', 'name', 'expression', 'timezone', 'overlap', 'startAt', 'endAt', 'variables'] as const;

/** What the form shows: as typed (strings, as the browser sends them). */
export type ScheduleDraft = Record<(typeof SCHEDULE_FIELDS)[number], string> & { enabled: boolean };
export const emptyDraft = (workflowId = ''): ScheduleDraft => ({
  workflowId,
  name: '',
  expression: '',
  timezone: 'UTC',
  overlap: 'skip',
  startAt: '',
  endAt: '',
  variables: '',
  enabled: true,
});

export type Preview = { ok: true; times: { local: string; iso: string }[] } | { ok: false; errors: FieldError[] } | undefined;

/** Every IANA zone this runtime knows (the datalist of "Timezone"). */
const ZONES = (() => {
  const z = Intl.supportedValuesOf('timeZone');
  return z.includes('UTC') ? z : ['UTC', ...z];
})();

/** The preview section: the next fire times, or why there are none; with scripts it refreshes itself as the form is typed in. */
export function PreviewSection({ preview }: { preview: Preview }) {
  return (
    <section
      id="schedule-preview"
      aria-labelledby="preview-title"
      aria-live="polite"
      hx-get="/console/schedules/preview"
      hx-trigger="input delay:400ms from:#schedule-form, change delay:400ms from:#schedule-form"
      hx-include="#expression, #timezone, #startAt, #endAt"
      hx-swap="outerHTML"
      hx-sync="this:replace"
    >
      <h2 id="preview-title">Next fire times</h2>
      {preview === undefined ? (
        <p class="muted">Press "Preview" to see the next five fire times.</p>
      ) : preview.ok ? (
        preview.times.length ? (
          <ol class="fire-times">
            {preview.times.map((t) => (
              <li key={t.iso}>
                <time datetime={t.iso}>{t.local}</time>
              </li>
            ))}
          </ol>
        ) : (
          <p>No fire time ahead: this schedule would never fire.</p>
        )
      ) : (
        <ul class="preview-errors">
          {preview.errors.map((e, i) => (
            <li key={String(i)}>
              <code>{e.path}</code>: {e.message}
            </li>
          ))}
        </ul>
      )}
      <p class="muted">In the schedule's timezone, as the scheduler computes them (a time skipped by a DST change has no fire).</p>
    </section>
  );
}

/** The section alone (the live preview's answer). */
export const previewFragment = (preview: Preview) => renderToString(<PreviewSection preview={preview} />);

type Workflows = { workflowId: string; name: string }[];

export function scheduleFormPage(
  session: ConsoleSession,
  opts: { draft: ScheduleDraft; workflows: Workflows; errors: FormErrors; preview: Preview; status?: number },
) {
  const { draft: d, errors } = opts;
  const focus = firstInvalid(errors, SCHEDULE_FIELDS);
  const at = (f: (typeof SCHEDULE_FIELDS)[number], hint = true) => described(f, errors.fields[f], hint, focus === f);
  return page(
    { title: 'Create schedule', session, section: '/console/schedules', status: opts.status ?? 200 },
    <form method="post" action="/console/schedules/new" id="schedule-form" novalidate>
      <FormAlert errors={errors} what="The schedule was not created." />
      <Csrf session={session} />
      <Field id="workflowId" label="Workflow" error={errors.fields.workflowId}>
        <select name="workflowId" required {...at('workflowId', false)}>
          <option value="" selected={d.workflowId === ''}>
            Choose a workflow…
          </option>
          {opts.workflows.map((w) => (
            <option key={w.workflowId} value={w.workflowId} selected={w.workflowId === d.workflowId}>
              {w.name}
            </option>
          ))}
        </select>
      </Field>
      <Field id="name" label="Name" hint="Optional: the expression when empty." error={errors.fields.name}>
        <input type="text" name="name" maxLength={200} value={d.name} autocomplete="off" {...at('name')} />
      </Field>
      <Field
        id="expression"
        label="Expression"
        hint={
          <>
            EventBridge Scheduler syntax: <code>cron(30 2 * * ? *)</code>, <code>rate(5 minutes)</code> or{' '}
            <code>at(2027-01-01T09:00:00)</code>.
          </>
        }
        error={errors.fields.expression}
      >
        <input
          type="text"
          name="expression"
          maxLength={256}
          value={d.expression}
          required
          autocomplete="off"
          spellcheck={false}
          {...at('expression')}
        />
      </Field>
      <Field id="timezone" label="Timezone" hint="An IANA time zone, such as Europe/Berlin." error={errors.fields.timezone}>
        <input
          type="text"
          name="timezone"
          list="timezones"
          maxLength={64}
          value={d.timezone}
          required
          autocomplete="off"
          {...at('timezone')}
        />
      </Field>
      <datalist id="timezones">
        {ZONES.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <Field
        id="overlap"
        label="Overlap policy"
        hint="When a fire comes while this schedule's last run is unfinished."
        error={errors.fields.overlap}
      >
        <select name="overlap" {...at('overlap')}>
          <option value="skip" selected={d.overlap === 'skip'}>
            Skip the fire (counted as skipped)
          </option>
          <option value="allow" selected={d.overlap === 'allow'}>
            Start another run
          </option>
        </select>
      </Field>
      <div class="grid">
        <Field id="startAt" label="Start (optional)" hint="In the schedule's timezone." error={errors.fields.startAt}>
          <input type="datetime-local" name="startAt" value={d.startAt} {...at('startAt')} />
        </Field>
        <Field id="endAt" label="End (optional)" hint="In the schedule's timezone." error={errors.fields.endAt}>
          <input type="datetime-local" name="endAt" value={d.endAt} {...at('endAt')} />
        </Field>
      </div>
      <Field
        id="variables"
        label="Input variables (JSON)"
        hint={'A JSON object, checked against the workflow\'s variables; e.g. {"env": "staging"}. Empty: the defaults.'}
        error={errors.fields.variables}
      >
        <textarea name="variables" rows={4} spellcheck={false} {...at('variables')}>
          {d.variables}
        </textarea>
      </Field>
      <label>
        <input type="checkbox" name="enabled" value="true" checked={d.enabled} /> Enabled (a paused schedule does not fire and does not
        count towards the plan's limit)
      </label>
      <PreviewSection preview={opts.preview} />
      <div class="actions">
        <button type="submit" name="intent" value="create">
          Create schedule
        </button>
        <button type="submit" name="intent" value="preview" class="secondary">
          Preview
        </button>
        <a href="/console/schedules">Cancel</a>
      </div>
    </form>,
  );
}
