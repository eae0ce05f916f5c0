import * as z from 'zod';
import { AuditEntry } from '../db/entities/audit.ts';
import { USER_ID } from '../ids.ts';
import { IsoTime, TIME_RANGE_IN_ORDER } from './time.ts';

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
  from: IsoTime.optional(),
  to: IsoTime.optional(),
};

export const AuditFilters = z.object(AuditFilterFields).refine(...TIME_RANGE_IN_ORDER);

export const AuditListQuery = z
  .object({
    ...AuditFilterFields,
    limit: z.coerce.number().int().min(1).max(100).default(25),
    cursor: z.string().max(4096).optional(),
  })
  .refine(...TIME_RANGE_IN_ORDER);

/** One entry of the audit log (docs/audit.md), a named schema of the OpenAPI document. */
export const AuditEntryView = AuditEntry.meta({ id: 'AuditEntry' });
export const AuditList = z.object({ items: z.array(AuditEntryView), nextCursor: z.string().nullable() });
