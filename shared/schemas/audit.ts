import * as z from 'zod';
import { AuditEntry } from '../db/entities/audit.ts';
import { USER_ID } from '../ids.ts';

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:\d{2})?$/;

/** An ISO 8601 time (`2026-11-27T21:05:00Z`), as milliseconds; without a zone it is UTC, a date alone its midnight. */
const isoTime = z
  .string()
  .max(40)
  .regex(ISO, 'an ISO 8601 time, such as 2026-11-27T21:05:00Z')
  .transform((s, ctx) => {
    const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(s) ? s : `${s.length === 10 ? `${s}T00:00` : s}Z`;
    const ms = Date.parse(zoned);
    if (Number.isNaN(ms)) ctx.addIssue({ code: 'custom', message: 'not a time' });
    return ms;
  });

/** The audit log's filters, the same for `GET /api/audit` and the console's page. */
export const AuditFilterFields = {
  actor: z.string().regex(USER_ID, 'a member id (usr_…)').optional(),
  action: z
    .string()
    .max(64)
    .regex(/^[a-z_]+(\.[a-z_]+)+$/, 'an action such as key.created')
    .optional(),
  objectType: z
    .string()
    .max(32)
    .regex(/^[a-z_]+$/, 'an object type such as webhook')
    .optional(),
  objectId: z
    .string()
    .max(128)
    .regex(/^[\w.:@+-]+$/, 'an id: letters, digits and _ . : @ + -')
    .optional(),
  from: isoTime.optional(),
  to: isoTime.optional(),
};

const fromBeforeTo = (q: { from?: number; to?: number }) => q.from === undefined || q.to === undefined || q.from <= q.to;
const toAfterFrom = { message: 'must not be before from', path: ['to'] };

export const AuditFilters = z.object(AuditFilterFields).refine(fromBeforeTo, toAfterFrom);

export const AuditListQuery = z
  .object({
    ...AuditFilterFields,
    limit: z.coerce.number().int().min(1).max(100).default(25),
    cursor: z.string().max(4096).optional(),
  })
  .refine(fromBeforeTo, toAfterFrom);

export const AuditList = z.object({ items: z.array(AuditEntry), nextCursor: z.string().nullable() });
