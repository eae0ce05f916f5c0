import * as z from 'zod';
import type { Route } from '../../../shared/http/route.ts';
import { ExecutionStatus } from '../../../shared/db/entities/execution-state.ts';
import { RUN_TRIGGERS } from '../../../shared/domain/run-list.ts';
import { Id } from '../../../shared/schemas/common.ts';
import { consolePage, cursorErrors, read } from '../../route-kinds.ts';

/** A GET form sends every field, the empty ones as `name=`: an empty field is no filter. */
const blank = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * An ISO 8601 time (`2026-11-27T21:05:00Z`), as milliseconds. Without a zone it is UTC: a
 * `datetime-local` field sends none, and the form labels its fields UTC. A date alone is its midnight.
 */
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

/** The runs list's filters and page: query parameters, so a filtered list can be bookmarked and shared. */
export const RunsQuery = z
  .object({
    workflowId: blank(Id.optional()),
    status: blank(ExecutionStatus.optional()),
    trigger: blank(z.enum(RUN_TRIGGERS).optional()),
    from: blank(isoTime.optional()),
    to: blank(isoTime.optional()),
    limit: blank(z.coerce.number().int().min(1).max(100).default(25)),
    cursor: blank(z.string().max(4096).optional()),
    /** `0`: no live refresh ("Pause updates"). */
    live: blank(z.enum(['0', '1']).optional()),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: 'must not be before from', path: ['to'] });

export const route = {
  method: 'GET',
  path: '/console/runs',
  handler: 'http/console/runs',
  summary: 'The runs list: filtered, newest first, paged, refreshed while a listed run is active',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: RunsQuery,
  errors: [...cursorErrors],
} as const satisfies Route;
