/**
 * Schedule expressions in EventBridge Scheduler's syntax and with its time rules, so a schedule accepted here is
 * one AWS accepts and fires when AWS would:
 * - `cron(min hour day-of-month month day-of-week year)` is read in the schedule's time zone (fields: cron.ts).
 *   A local time that does not exist (DST spring forward) is skipped; one that occurs twice (fall back) fires
 *   once, at its first occurrence.
 * - `rate(n unit)` is a fixed duration in real time (a day is 24 hours, also across DST), counted from the
 *   schedule's start: fires at startAt + k × period (k ≥ 0). Callers pass the schedule's `startAt`, or its creation
 *   time when it has none (EventBridge starts a rate schedule without StartDate at once); with no `startAt` at all
 *   the count starts at `after`.
 * - `at(yyyy-mm-ddThh:mm:ss)` is a local time in the zone and fires once; like EventBridge, it ignores startAt and
 *   endAt. A local time in a DST gap does not exist, so it has no fire time (callers reject it); one that occurs
 *   twice fires at the first.
 */
import * as z from 'zod';
import { type CronSpec, daysInMonth, type LocalTime, nextLocalMatch, parseCronFields } from './cron.ts';

export type { CronSpec, LocalTime } from './cron.ts';
export type RateUnit = 'minute' | 'hour' | 'day';
export type WallTime = LocalTime & { second: number };
export type ScheduleExpression =
  | { kind: 'cron'; source: string; cron: CronSpec }
  | { kind: 'rate'; source: string; value: number; unit: RateUnit; periodMs: number }
  | { kind: 'at'; source: string; at: WallTime };
type Parsed = { ok: true; value: ScheduleExpression } | { ok: false; message: string };

const UNIT_MS: Record<RateUnit, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const MAX_RATE = 1_000_000;
/** CreateSchedule's limit on ScheduleExpression and ScheduleExpressionTimezone. */
const MAX_EXPRESSION = 256;
const MAX_TIMEZONE = 50;

const bad = (message: string): Parsed => ({ ok: false, message });

/** Parse EventBridge Scheduler syntax; never throws. The message is precise (which field, why). */
export function parseScheduleExpression(source: string): Parsed {
  if (typeof source !== 'string' || source.length === 0) return bad('expression is empty: use cron(...), rate(...) or at(...)');
  if (source.length > MAX_EXPRESSION) return bad(`expression is longer than ${MAX_EXPRESSION} characters`);
  const m = /^(cron|rate|at)\((.*)\)$/s.exec(source);
  if (!m) return bad('expression must be cron(...), rate(...) or at(...), e.g. rate(5 minutes) or cron(0 9 ? * MON-FRI *)');
  const kind = m[1] as 'cron' | 'rate' | 'at';
  const body = m[2] as string;
  if (kind === 'cron') {
    const cron = parseCronFields(body);
    return cron.ok ? { ok: true, value: { kind, source, cron: cron.value } } : cron;
  }
  if (kind === 'rate') return parseRate(source, body);
  return parseAt(source, body);
}

function parseRate(source: string, body: string): Parsed {
  const m = /^(\S+) +(\S+)$/.exec(body);
  if (!m) return bad('rate takes a value and a unit separated by a space, e.g. rate(5 minutes)');
  const [, digits = '', word = ''] = m;
  if (!/^[1-9]\d*$/.test(digits) || Number(digits) > MAX_RATE)
    return bad(`rate value '${digits}' must be a whole number from 1 to ${MAX_RATE} without leading zeros`);
  const value = Number(digits);
  const unit = word.replace(/s$/, '') as RateUnit;
  if (!(unit in UNIT_MS) || !/^[a-z]+$/.test(word)) return bad(`rate unit '${word}' must be minute(s), hour(s) or day(s)`);
  if (value === 1 && word !== unit) return bad(`rate(1 ${word}) takes the singular unit: rate(1 ${unit})`);
  if (value > 1 && word === unit) return bad(`rate(${value} ${word}) takes the plural unit: rate(${value} ${unit}s)`);
  return { ok: true, value: { kind: 'rate', source, value, unit, periodMs: value * UNIT_MS[unit] } };
}

function parseAt(source: string, body: string): Parsed {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(body);
  if (!m) return bad(`at takes a local date and time as yyyy-mm-ddThh:mm:ss, e.g. at(2026-05-01T09:00:00), not '${body}'`);
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (year < 1970 || year > 2199) return bad(`at: year ${year} is out of range 1970-2199`);
  if (month < 1 || month > 12) return bad(`at: month ${month} is out of range 1-12`);
  if (day < 1 || day > daysInMonth(year, month)) return bad(`at: ${body.slice(0, 10)} is not a date (day ${day})`);
  if (hour > 23) return bad(`at: hour ${hour} is out of range 0-23`);
  if (minute > 59) return bad(`at: minute ${minute} is out of range 0-59`);
  if (second > 59) return bad(`at: second ${second} is out of range 0-59`);
  return { ok: true, value: { kind: 'at', source, at: { year, month, day, hour, minute, second } } };
}

export const isOneTime = (expr: ScheduleExpression): expr is Extract<ScheduleExpression, { kind: 'at' }> => expr.kind === 'at';

/**
 * An IANA zone name Intl accepts (EventBridge's ScheduleExpressionTimezone): exact case (`Europe/Berlin`, not
 * `europe/berlin`), no UTC offsets such as `+01:00`, at most 50 characters.
 */
export function isValidTimezone(timezone: string): boolean {
  if (typeof timezone !== 'string' || timezone.length > MAX_TIMEZONE) return false;
  if (!/^[A-Z][A-Za-z0-9_+-]*(\/[A-Z0-9][A-Za-z0-9_+-]*)*$/.test(timezone)) return false;
  try {
    const resolved = formatter(timezone).resolvedOptions().timeZone;
    // Intl reads names in any case; a name it keeps (not an alias it maps to another) must come back unchanged.
    return resolved.toLowerCase() !== timezone.toLowerCase() || resolved === timezone;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    const numeric = { year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' } as const;
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', ...numeric });
    if (formatters.size > 500) formatters.clear();
    formatters.set(timezone, f);
  }
  return f;
}

/** The wall-clock time in the zone at an instant (to the second). */
export function localTimeIn(epochMs: number, timezone: string): WallTime {
  const t: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(epochMs)) if (p.type !== 'literal') t[p.type] = Number(p.value);
  return {
    year: t.year as number,
    month: t.month as number,
    day: t.day as number,
    hour: t.hour as number,
    minute: t.minute as number,
    second: t.second as number,
  };
}

const asUtc = (w: WallTime) => Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
const HOUR = 3_600_000;

/** Every instant at which the zone's clock shows `w`, ascending: none in a DST gap, two in a repeated hour. */
export function instantsOf(w: WallTime, timezone: string): number[] {
  const guess = asUtc(w);
  const offsets = new Set([-15, -7, 0, 7, 15].map((h) => offsetAt(guess + h * HOUR, timezone)));
  const out = [...offsets].map((o) => guess - o).filter((e) => offsetAt(e, timezone) === guess - e);
  return [...new Set(out)].sort((a, b) => a - b);
}

function offsetAt(epochMs: number, timezone: string): number {
  const seconds = Math.floor(epochMs / 1000) * 1000;
  return asUtc(localTimeIn(seconds, timezone)) - seconds;
}

/** Cron fire times lie in 1970-2199: searching only there keeps Intl's calendar in plain years. */
const FLOOR = Date.UTC(1969, 11, 30);
const CEILING = Date.UTC(2200, 0, 2);

/**
 * Up to `count` fire times (epoch ms), ascending, strictly after `after`, at or after `startAt`, at or before `endAt`.
 * A rate counts from `startAt` (pass the creation time when the schedule has none); an at() ignores both bounds.
 */
export function nextFireTimes(
  expr: ScheduleExpression,
  opts: { timezone: string; after: number; startAt?: number; endAt?: number; count: number },
): number[] {
  const { timezone, after, startAt, endAt, count } = opts;
  const out: number[] = [];
  if (!(count >= 1) || Number.isNaN(after)) return out;
  if (expr.kind === 'at') {
    const first = instantsOf(expr.at, timezone)[0];
    return first !== undefined && first > after ? [first] : [];
  }
  const inWindow = (t: number) => endAt === undefined || t <= endAt;
  if (expr.kind === 'rate') {
    const anchor = startAt ?? after;
    const k = Math.max(startAt === undefined ? 1 : 0, Math.floor((after - anchor) / expr.periodMs) + 1);
    for (let t = anchor + k * expr.periodMs; out.length < count && inWindow(t); t += expr.periodMs) out.push(t);
    return out;
  }
  const lower = Math.max(after, startAt ?? after, FLOOR);
  if (lower > CEILING) return out;
  let from: LocalTime | null = localTimeIn(lower, timezone);
  // Each pass yields a fire time or skips a local time that is in a gap or already past (the repeat of an hour).
  for (let pass = 0; from && out.length < count && pass < count + 10_000; pass++) {
    const match = nextLocalMatch(expr.cron, from);
    if (!match) break;
    const t = instantsOf({ ...match, second: 0 }, timezone)[0];
    if (t !== undefined && t > after && (startAt === undefined || t >= startAt)) {
      if (!inWindow(t)) break;
      if (t > (out.at(-1) ?? Number.NEGATIVE_INFINITY)) out.push(t);
    }
    from = nextMinute(match);
  }
  return out;
}

function nextMinute(l: LocalTime): LocalTime {
  const d = new Date(Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute + 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
}

/** ISO 8601 in the zone with its offset, e.g. 2026-03-29T03:00:00+02:00. */
export function formatInZone(epochMs: number, timezone: string): string {
  const w = localTimeIn(epochMs, timezone);
  const offset = Math.round((asUtc(w) - Math.floor(epochMs / 1000) * 1000) / 60_000);
  const two = (n: number) => String(n).padStart(2, '0');
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${w.year}-${two(w.month)}-${two(w.day)}T${two(w.hour)}:${two(w.minute)}:${two(w.second)}${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/** For route bodies: a string parseScheduleExpression accepts, failing with its message. */
export const ScheduleExpressionString = z.string().superRefine((s, ctx) => {
  const parsed = parseScheduleExpression(s);
  if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
});

/** For route bodies: an IANA time zone name such as Europe/Berlin. */
export const ScheduleTimezone = z.string().refine(isValidTimezone, 'must be an IANA time zone name such as Europe/Berlin or UTC');
