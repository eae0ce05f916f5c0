import type { ConsoleSession } from '../../../../shared/console/auth.ts';
import { localInputToInstant, previewFireTimes } from '../../../../shared/domain/schedule-console.ts';
import { pageWorkflows } from '../../../../shared/domain/workflows.ts';
import type { FieldError } from '../../../../shared/errors.ts';
import { Id } from '../../../../shared/schemas/common.ts';
import { SCHEDULE_FIELDS, type ScheduleDraft } from './form-view.tsx';

// The "Create schedule" form as typed, and the API's body it stands for (times read in the schedule's zone).

/** Workflows the form offers (the newest; a larger account picks by `?workflowId=` from the workflow's page). */
export const FORM_WORKFLOWS = 200;

export async function scheduleWorkflows(session: ConsoleSession) {
  const page = await pageWorkflows(session.principal.accountId, FORM_WORKFLOWS, undefined);
  return page.items.map((w) => ({ workflowId: w.workflowId, name: w.name }));
}

/** The form's fields as sent (each at most as long as the API takes; the body limit bounds the rest). */
export function draftOf(form: URLSearchParams): ScheduleDraft {
  const get = (f: string) => form.get(f) ?? '';
  return {
    ...(Object.fromEntries(SCHEDULE_FIELDS.map((f) => [f, get(f)])) as Record<(typeof SCHEDULE_FIELDS)[number], string>),
    timezone: form.has('timezone') ? get('timezone').trim() : 'UTC',
    expression: get('expression').trim(),
    enabled: form.get('enabled') === 'true',
  };
}

type Body = Record<string, unknown>;

/** The API's create body (`CreateScheduleBody` checks it), or the errors of the fields that cannot become one. */
export function draftToBody(d: ScheduleDraft): { ok: true; body: Body } | { ok: false; body: Body; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const body: Body = { expression: d.expression, timezone: d.timezone, overlap: d.overlap, enabled: d.enabled };
  if (d.name.trim()) body.name = d.name;
  if (d.workflowId && !Id.safeParse(d.workflowId).success) errors.push({ path: 'workflowId', message: 'no such workflow in this account' });
  for (const f of ['startAt', 'endAt'] as const) {
    if (!d[f]) continue;
    const iso = localInputToInstant(d[f], d.timezone);
    if (iso) body[f] = iso;
    else errors.push({ path: f, message: `must be a date and time that exists in ${d.timezone} (YYYY-MM-DDTHH:MM)` });
  }
  if (d.variables.trim()) {
    try {
      const v = JSON.parse(d.variables) as unknown;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) errors.push({ path: 'variables', message: 'must be a JSON object' });
      else body.variables = v;
    } catch (e) {
      errors.push({ path: 'variables', message: `is not JSON: ${(e as Error).message}` });
    }
  }
  return errors.length ? { ok: false, body, errors } : { ok: true, body };
}

/** The preview of a draft: its next fire times, or the errors of its expression, zone, start and end (each once). */
export function previewOf(d: ScheduleDraft, now = Date.now()) {
  const converted = draftToBody({ ...d, variables: '', workflowId: '' });
  const b = converted.body as { expression: string; timezone: string; startAt?: string; endAt?: string };
  const preview = previewFireTimes({ expression: b.expression, timezone: b.timezone, startAt: b.startAt, endAt: b.endAt }, now);
  if (converted.ok) return preview;
  const errors = [...converted.errors, ...(preview.ok ? [] : preview.errors)];
  return { ok: false as const, errors: errors.filter((e, i) => errors.findIndex((o) => o.path === e.path) === i) };
}
