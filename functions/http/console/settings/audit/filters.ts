import type { FieldError } from '../../../../../shared/errors.ts';
import type { AuditFilters as Filters } from '../../../../../shared/domain/audit.ts';
import { AuditFilters } from '../../../../../shared/schemas/audit.ts';

/** The form's fields as sent (a GET form sends the empty ones as `name=`: no filter). */
export type AuditForm = Partial<Record<'actor' | 'action' | 'objectType' | 'objectId' | 'from' | 'to', string>>;

/**
 * The filters of the form, checked by the API's schema: the filters, or the errors by field (the same
 * paths and messages `GET /api/audit` answers). A `datetime-local` field's value has no zone: UTC.
 */
export function auditFilters(form: AuditForm): { filters: Filters; errors?: undefined } | { filters?: undefined; errors: FieldError[] } {
  const sent = Object.fromEntries(
    Object.entries(form)
      .filter(([, v]) => v !== undefined && v.trim() !== '')
      .map(([k, v]) => [k, v?.trim()]),
  );
  const parsed = AuditFilters.safeParse(sent);
  if (parsed.success) return { filters: parsed.data };
  return { errors: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) };
}
