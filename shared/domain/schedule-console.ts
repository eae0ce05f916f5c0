import { getAccount } from '../db/entities/account.ts';
import { getExecutions } from '../db/entities/execution.ts';
import type { Schedule } from '../db/entities/schedule.ts';
import { enabledScheduleCount, listAccountScheduleItems } from '../db/entities/schedule-account.ts';
import { getWorkflow } from '../db/entities/workflow.ts';
import type { FieldError } from '../errors.ts';
import { fireTimes } from '../schedules/clock.ts';
import { formatInZone, instantsOf, isValidTimezone, parseScheduleExpression } from '../schedules/expression.ts';
import { CreateScheduleBody } from '../schemas/schedules.ts';
import { type SessionPrincipal, SCHEDULE_LIMITS, scheduleView } from './schedules.ts';

// What the console's schedule pages read besides a workflow's schedules (shared/domain/schedules.ts):
// the account's schedules with their workflows and last runs, the plan's count, and the preview of
// fire times a form shows as it is typed, computed with the scheduler's own code (shared/schedules/).

/** Fire times the preview lists. */
export const PREVIEW_COUNT = 5;

/** The account's schedules, newest first, each with its workflow's name and its last run's status (one read per page of them). */
export async function listAccountSchedules(p: SessionPrincipal, workflowId?: string, now = Date.now()) {
  const all = await listAccountScheduleItems(p.accountId);
  const items = all.filter((s) => workflowId === undefined || s.workflowId === workflowId).sort((a, b) => b.createdAt - a.createdAt);
  const workflowIds = [...new Set(items.map((s) => s.workflowId))];
  const workflows = new Map(
    await Promise.all(workflowIds.map(async (id) => [id, (await getWorkflow(p.accountId, id))?.name ?? id] as const)),
  );
  const runs = await getExecutions(
    p.accountId,
    items.flatMap((s) => (s.lastExecutionId ? [s.lastExecutionId] : [])),
  );
  const status = new Map(runs.map((e) => [e.executionId, e.status]));
  return items.map((s: Schedule) => ({
    ...scheduleView(s, now),
    workflowName: workflows.get(s.workflowId) ?? s.workflowId,
    lastStatus: s.lastExecutionId ? (status.get(s.lastExecutionId) ?? null) : null,
  }));
}
export type AccountSchedule = Awaited<ReturnType<typeof listAccountSchedules>>[number];

/** The plan's limit of enabled schedules and how many are: "3 of 5 schedules" (`limit` undefined: no limit). */
export async function scheduleUsage(p: SessionPrincipal) {
  const [account, enabled] = await Promise.all([getAccount(p.accountId), enabledScheduleCount(p.accountId)]);
  return { enabled, limit: account ? SCHEDULE_LIMITS[account.plan] : 0, plan: account?.plan ?? null };
}

/** A `datetime-local` value (`2027-03-26T00:00`) read in `timezone`, as the API's ISO 8601 with offset; undefined when it is no such time. */
export function localInputToInstant(value: string, timezone: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m || !isValidTimezone(timezone)) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map((v) => Number(v ?? 0)) as number[];
  const probe = new Date(Date.UTC(year as number, (month as number) - 1, day, hour, minute, second));
  if (probe.getUTCMonth() !== (month as number) - 1 || probe.getUTCDate() !== day || (year as number) < 1970 || (year as number) > 2199)
    return undefined;
  const t = instantsOf(
    {
      year: year as number,
      month: month as number,
      day: day as number,
      hour: hour as number,
      minute: minute as number,
      second: second as number,
    },
    timezone,
  )[0];
  return t === undefined ? undefined : formatInZone(t, timezone);
}

/** What a preview is given: the form's settings as the API takes them (startAt/endAt ISO with offset). */
export type PreviewInput = { expression: string; timezone: string; startAt?: string | undefined; endAt?: string | undefined };

/**
 * The next `PREVIEW_COUNT` fire times of settings not saved yet, as the scheduler computes them
 * (`fireTimes`: DST gaps skipped, a repeated hour fired once), formatted `YYYY-MM-DD HH:MM` in the
 * zone with the ISO instant beside; or the errors of the fields that make it impossible, by path, with
 * the API's messages. A rate counts from now (a new schedule's anchor) or its start.
 */
export function previewFireTimes(
  input: PreviewInput,
  now = Date.now(),
): { ok: true; times: { local: string; iso: string }[] } | { ok: false; errors: FieldError[] } {
  const parsed = CreateScheduleBody.pick({ expression: true, timezone: true, startAt: true, endAt: true }).safeParse(input);
  const errors: FieldError[] = parsed.success ? [] : parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  const expression = parseScheduleExpression(input.expression);
  if (!expression.ok && !errors.some((e) => e.path === 'expression')) errors.push({ path: 'expression', message: expression.message });
  if (!isValidTimezone(input.timezone) && !errors.some((e) => e.path === 'timezone'))
    errors.push({ path: 'timezone', message: 'must be an IANA time zone name, like Europe/Berlin' });
  const startAt = input.startAt ? Date.parse(input.startAt) : undefined;
  const endAt = input.endAt ? Date.parse(input.endAt) : undefined;
  if (startAt !== undefined && endAt !== undefined && endAt <= startAt) errors.push({ path: 'endAt', message: 'must be after startAt' });
  if (errors.length) return { ok: false, errors };
  const times = fireTimes(
    {
      accountId: '',
      scheduleId: '',
      expression: input.expression,
      timezone: input.timezone,
      startAt,
      endAt,
      anchorAt: now,
      updatedAt: now,
    },
    now - 1,
    PREVIEW_COUNT,
  );
  return {
    ok: true,
    times: times.map((t) => {
      const iso = formatInZone(t, input.timezone);
      return { local: `${iso.slice(0, 10)} ${iso.slice(11, 16)}`, iso };
    }),
  };
}
