import { COUNTED_ENDS, type CountedEnd, hourOf, readRunHours } from '../db/entities/run-hours.ts';

// The overview's figures (docs/console.md "The overview"): the account's runs counted per hour as they
// changed state (shared/db/entities/run-hours.ts), summed over the hours of a span. Not a sample: every
// run that started or ended in those hours is in them, once the functions that moved it have flushed
// their counts (at most a second for the HTTP functions, the end of a batch for the workers).

export const SPANS = { '24h': 24, '7d': 7 * 24 } as const;
export type Span = keyof typeof SPANS;
const HOUR_MS = 3_600_000;

export type HourBar = { hour: number; started: number; succeeded: number; failed: number; other: number };
export type RunOverview = {
  /** The first hour counted (its start): the span's hours end with the current one. */
  since: number;
  span: Span;
  started: number;
  ends: [CountedEnd, number][];
  /** Failed runs by error code, most first. */
  errors: [string, number][];
  hours: HourBar[];
};

/** Never below zero: a take-back written before the count it takes back (an instance lost its counts) shows as none. */
const n = (v: number | undefined) => Math.max(0, v ?? 0);

/** The start of a span's first hour: the span's hours end with the current one. */
export const spanStart = (span: Span, now: number) => hourOf(now) - (SPANS[span] - 1) * HOUR_MS;

/** The account's runs of the last `span` (the current hour and the ones before): one Query of its hour items. */
export async function runOverview(accountId: string, span: Span, now = Date.now()): Promise<RunOverview> {
  const last = hourOf(now);
  const since = spanStart(span, now);
  const stored = new Map((await readRunHours(accountId, since, last)).map((h) => [h.hour, h]));
  const totals = new Map<CountedEnd, number>();
  const errors = new Map<string, number>();
  let started = 0;
  const hours: HourBar[] = [];
  for (let hour = since; hour <= last; hour += HOUR_MS) {
    const h = stored.get(hour);
    const ends = h?.ends ?? {};
    started += n(h?.started);
    for (const s of COUNTED_ENDS) totals.set(s, (totals.get(s) ?? 0) + n(ends[s]));
    for (const [code, c] of Object.entries(h?.errors ?? {})) errors.set(code, (errors.get(code) ?? 0) + n(c));
    hours.push({
      hour,
      started: n(h?.started),
      succeeded: n(ends.SUCCEEDED),
      failed: n(ends.FAILED),
      other: n(ends.CANCELLED) + n(ends.INTERRUPTED),
    });
  }
  return {
    since,
    span,
    started,
    ends: COUNTED_ENDS.map((s) => [s, totals.get(s) ?? 0]),
    errors: [...errors].filter(([, c]) => c > 0).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    hours,
  };
}
