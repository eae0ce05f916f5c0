// PLACEHOLDER (branch issue-schedules): the real module comes from branch issue-sched-expr and replaces
// this file whole at merge. Same exports; rate and at are exact, cron goes through croner roughly.
import { Cron } from 'croner';

export type ScheduleExpression = {
  kind: 'cron' | 'rate' | 'at';
  source: string;
  /** rate: the period in ms. */
  periodMs?: number;
  /** at: the local wall time, `yyyy-mm-ddThh:mm:ss`. */
  at?: string;
  /** cron: the six EventBridge fields. */
  fields?: string[];
};

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;
const CRON = /^cron\(([^()]+)\)$/;
const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

export function parseScheduleExpression(source: string): { ok: true; value: ScheduleExpression } | { ok: false; message: string } {
  const rate = RATE.exec(source);
  if (rate) {
    const n = Number(rate[1]);
    const unit = (rate[2] as string).replace(/s$/, '') as keyof typeof UNIT_MS;
    if (n < 1) return { ok: false, message: 'a rate is at least 1' };
    if ((n === 1) !== !(rate[2] as string).endsWith('s')) return { ok: false, message: `use rate(1 ${unit}) or rate(n ${unit}s)` };
    return { ok: true, value: { kind: 'rate', source, periodMs: n * UNIT_MS[unit] } };
  }
  const at = AT.exec(source);
  if (at) {
    const [y, mo, d, h, mi, s] = at.slice(1).map(Number) as [number, number, number, number, number, number];
    const date = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
    if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
      return { ok: false, message: 'not a date and time' };
    return { ok: true, value: { kind: 'at', source, at: source.slice(3, -1) } };
  }
  const cron = CRON.exec(source);
  if (cron) {
    const fields = (cron[1] as string).trim().split(/\s+/);
    if (fields.length !== 6) return { ok: false, message: 'a cron expression has six fields' };
    try {
      new Cron(cronPattern(fields), { timezone: 'UTC', paused: true });
    } catch (e) {
      return { ok: false, message: (e as Error).message };
    }
    return { ok: true, value: { kind: 'cron', source, fields } };
  }
  return { ok: false, message: 'use cron(...), rate(...) or at(...)' };
}

export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return timezone.length > 0;
  } catch {
    return false;
  }
}

/** EventBridge's day of week is 1-7 (SUN-SAT); croner's 0-6, and its first field is seconds. */
const cronPattern = (f: string[]) =>
  `0 ${f[0]} ${f[1]} ${f[2]} ${f[3]} ${(f[4] as string).replace(/\b([1-7])\b/g, (_, d: string) => String(Number(d) - 1))}`;

/** The zone's offset in ms at an instant. */
function offsetAt(epochMs: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(epochMs));
  const v = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return Date.UTC(v('year'), v('month') - 1, v('day'), v('hour'), v('minute'), v('second')) - Math.floor(epochMs / 1000) * 1000;
}

function localToEpoch(local: string, timezone: string): number {
  const guess = Date.parse(`${local}Z`);
  const first = guess - offsetAt(guess, timezone);
  return guess - offsetAt(first, timezone);
}

/** Up to `count` fire times (epoch ms), ascending, strictly after `after`, at or after `startAt`, at or before `endAt`. */
export function nextFireTimes(
  expr: ScheduleExpression,
  opts: { timezone: string; after: number; startAt?: number; endAt?: number; count: number },
): number[] {
  const out: number[] = [];
  const ok = (t: number) =>
    t > opts.after && (opts.startAt === undefined || t >= opts.startAt) && (opts.endAt === undefined || t <= opts.endAt);
  if (expr.kind === 'at') {
    const t = localToEpoch(expr.at as string, opts.timezone);
    return ok(t) && opts.count > 0 ? [t] : [];
  }
  if (expr.kind === 'rate') {
    const period = expr.periodMs as number;
    const anchor = opts.startAt ?? opts.after;
    let t = anchor + Math.max(0, Math.floor((opts.after - anchor) / period) + 1) * period;
    if (opts.startAt !== undefined && opts.after < opts.startAt) t = opts.startAt;
    while (out.length < opts.count && (opts.endAt === undefined || t <= opts.endAt)) {
      if (ok(t)) out.push(t);
      t += period;
    }
    return out;
  }
  const fields = expr.fields as string[];
  const cron = new Cron(cronPattern(fields), { timezone: opts.timezone, paused: true });
  let from = new Date(Math.max(opts.after, (opts.startAt ?? 0) - 1));
  for (let i = 0; out.length < opts.count && i < 5000; i++) {
    const next = cron.nextRun(from);
    if (!next) break;
    const t = next.getTime();
    if (opts.endAt !== undefined && t > opts.endAt) break;
    if (fields[5] === '*' || fields[5] === undefined || fields[5] === String(next.getUTCFullYear())) if (ok(t)) out.push(t);
    from = next;
  }
  return out;
}

/** ISO 8601 with the zone's offset. */
export function formatInZone(epochMs: number, timezone: string): string {
  const offset = offsetAt(epochMs, timezone);
  const local = new Date(Math.floor(epochMs / 1000) * 1000 + offset).toISOString().slice(0, 19);
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset) / 60_000;
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
