import * as z from 'zod';

// A time a client filters by (the audit log's and the runs list's from/to): ISO 8601, read strictly;
// and the one rule of a range of two: `to` not before `from`.

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(?:(Z)|([+-])(\d{2}):(\d{2}))?$/;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the instants whose ISO text (and sort key) has four digits of year. */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0) => {
  const t = new Date(0);
  t.setUTCFullYear(y, mo, d);
  t.setUTCHours(h, mi, s, ms);
  return t.getTime();
};
export const MIN_TIME = utc(0, 0, 1);
export const MAX_TIME = utc(9999, 11, 31, 23, 59, 59, 999);

/** The days of a month (0-based), leap years counted: the day before the next month's first. */
const daysIn = (year: number, month: number) => new Date(utc(year, month + 1, 0)).getUTCDate();

/**
 * The instant an ISO 8601 text names, in ms, or why it names none: each field in its range (a day
 * that the month has: no 2026-02-30; hours 00–23; offsets up to ±23:59), and the instant, its offset
 * applied, within the years 0000–9999 of UTC. Without a zone it is UTC, a date alone its midnight.
 */
export function isoInstant(text: string): { ms: number } | { error: string } {
  const m = ISO.exec(text);
  if (!m) return { error: 'an ISO 8601 time, such as 2026-11-27T21:05:00Z' };
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zulu, sign, oh = '00', om = '00'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12) return { error: `no month ${mo}: months are 01 to 12` };
  const days = daysIn(year, month - 1);
  if (day < 1 || day > days) return { error: `no day ${d} in ${y}-${mo}: it has ${days} days` };
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59)
    return { error: `no time ${h}:${mi}:${s}: hours 00–23, minutes and seconds 00–59` };
  if (Number(oh) > 23 || Number(om) > 59) return { error: `no offset ${sign}${oh}:${om}: at most ±23:59` };
  const local = utc(year, month - 1, day, Number(h), Number(mi), Number(s), Number(frac.padEnd(3, '0').slice(0, 3)));
  const offset = zulu || !sign ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om)) * 60_000;
  const ms = local - offset;
  if (ms < MIN_TIME || ms > MAX_TIME) return { error: 'out of range: with its offset, the time must fall in the years 0000 to 9999 (UTC)' };
  return { ms };
}

/**
 * An ISO 8601 time (`2026-11-27T21:05:00Z`) as milliseconds; a text that names no instant (`isoInstant`)
 * is refused at its field. Without a zone it is UTC: a `datetime-local` field sends none, and the forms
 * label their fields UTC.
 */
export const IsoTime = z
  .string()
  .max(40)
  .regex(ISO, 'an ISO 8601 time, such as 2026-11-27T21:05:00Z')
  .transform((s, ctx) => {
    const r = isoInstant(s);
    if ('error' in r) {
      ctx.addIssue({ code: 'custom', message: r.error });
      return z.NEVER;
    }
    return r.ms;
  });

/** A range's bounds as read (ms; either may be absent). */
type Range = { from?: number | undefined; to?: number | undefined };

/**
 * The check of a time range, for a schema's `.refine(...TIME_RANGE_IN_ORDER)`: `to` must not be before
 * `from` (the error at `to`). The audit log (API and console) and the runs list filter by such a range.
 */
export const TIME_RANGE_IN_ORDER: [check: (q: Range) => boolean, error: { message: string; path: string[] }] = [
  (q) => q.from === undefined || q.to === undefined || q.from <= q.to,
  { message: 'must not be before from', path: ['to'] },
];
