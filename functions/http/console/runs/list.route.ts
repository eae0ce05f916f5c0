import * as z from 'zod';
import type { Route } from '../../../../shared/http/route.ts';
import { ExecutionStatus } from '../../../../shared/domain/read-types.ts';
import { RUN_TRIGGERS } from '../../../../shared/domain/run-list.ts';
import { Id } from '../../../../shared/schemas/common.ts';
import { IsoTime, TIME_RANGE_IN_ORDER } from '../../../../shared/schemas/time.ts';
import { CONSOLE_FUNCTIONS, consolePage, cursorErrors, read, refuses } from '../../../route-kinds.ts';

/** A GET form sends every field, the empty ones as `name=`: an empty field is no filter. */
const blank = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema);

/** The runs list's filters and page: query parameters, so a filtered list can be bookmarked and shared. */
export const RunsQuery = z
  .object({
    workflowId: blank(Id.optional()),
    status: blank(ExecutionStatus.optional()),
    trigger: blank(z.enum(RUN_TRIGGERS).optional()),
    from: blank(IsoTime.optional()),
    to: blank(IsoTime.optional()),
    limit: blank(z.coerce.number().int().min(1).max(100).default(25)),
    cursor: blank(z.string().max(4096).optional()),
    /** `0`: no live refresh ("Pause updates"). */
    live: blank(z.enum(['0', '1']).optional()),
  })
  .refine(...TIME_RANGE_IN_ORDER);

/** The fields of the filter form: a wrong one is shown at its field. */
export const FILTER_FIELDS = ['workflowId', 'status', 'trigger', 'from', 'to'] as const;

/**
 * What the route takes: the same parameters as text. The page reads them with `RunsQuery` itself, so a
 * wrong filter is shown in the form, at its field, with the list empty (400), not as an error page.
 */
const TEXT = z.string().max(4096).optional();
export const RunsQueryText = z.object(
  Object.fromEntries(Object.keys(RunsQuery.shape).map((k) => [k, TEXT])) as Record<keyof typeof RunsQuery.shape, typeof TEXT>,
);

export const route = {
  method: 'GET',
  path: '/console/runs',
  handler: CONSOLE_FUNCTIONS.read,
  summary: 'The runs list: filtered, newest first, paged, refreshed while a listed run is active',
  tag: 'Console pages',
  auth: consolePage,
  grants: read,
  html: true,
  query: RunsQueryText,
  errors: [...cursorErrors, ...refuses(400, 'VALIDATION_FAILED')],
} as const satisfies Route;
