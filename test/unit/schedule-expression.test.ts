import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cron } from 'croner';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matches } from '../../shared/schedules/cron.ts';
import {
  formatInZone,
  instantsOf,
  isOneTime,
  isValidTimezone,
  localTimeIn,
  nextFireTimes,
  parseScheduleExpression,
  type ScheduleExpression,
  ScheduleExpressionString,
  ScheduleTimezone,
} from '../../shared/schedules/expression.ts';

const parse = (source: string): ScheduleExpression => {
  const parsed = parseScheduleExpression(source);
  if (!parsed.ok) throw new Error(`${source}: ${parsed.message}`);
  return parsed.value;
};
const messageOf = (source: string) => {
  const parsed = parseScheduleExpression(source);
  return parsed.ok ? 'accepted' : parsed.message;
};
/** Fire times as ISO 8601 in the zone, from an ISO 8601 instant (with its offset). */
const fires = (source: string, timezone: string, after: string, count: number, more: { startAt?: string; endAt?: string } = {}) =>
  nextFireTimes(parse(source), {
    timezone,
    after: Date.parse(after),
    count,
    ...(more.startAt ? { startAt: Date.parse(more.startAt) } : {}),
    ...(more.endAt ? { endAt: Date.parse(more.endAt) } : {}),
  }).map((t) => formatInZone(t, timezone));

describe('parseScheduleExpression: valid forms', () => {
  it.each([
    ['cron(0 9 * * ? *)', 'cron'],
    ['cron(0/15 8-17 ? * MON-FRI *)', 'cron'],
    ['cron(5,35 */2 1-15/2 JAN,mar,Jul-SEP ? 2026-2030,2199)', 'cron'],
    ['cron(0 12 L * ? *)', 'cron'],
    ['cron(0 12 LW * ? *)', 'cron'],
    ['cron(0 12 15W * ? *)', 'cron'],
    ['cron(0 12 ? * 6L *)', 'cron'],
    ['cron(0 12 ? * FRIL *)', 'cron'],
    ['cron(0 12 ? * 3#2 *)', 'cron'],
    ['cron(0 12 ? * mon#1 *)', 'cron'],
    ['cron(0 12 ? * L *)', 'cron'],
    ['cron(0 0 1 1 ? 1970)', 'cron'],
    ['cron(05 10  * * ? *)', 'cron'],
    ['rate(1 minute)', 'rate'],
    ['rate(5 minutes)', 'rate'],
    ['rate(1 hour)', 'rate'],
    ['rate(12 hours)', 'rate'],
    ['rate(1 day)', 'rate'],
    ['rate(1000000 days)', 'rate'],
    ['at(2026-05-01T09:00:00)', 'at'],
    ['at(2028-02-29T23:59:59)', 'at'],
  ])('%s is a %s expression', (source, kind) => {
    const value = parse(source);
    expect(value.kind).toBe(kind);
    expect(value.source).toBe(source);
  });

  it('keeps what it parsed: the fields, the period, the local time', () => {
    expect(parse('cron(5,35 */8 1-15/7 JAN,mar ? 2026-2027)')).toMatchObject({
      cron: {
        minutes: [5, 35],
        hours: [0, 8, 16],
        dayOfMonth: { type: 'days', days: [1, 8, 15] },
        months: [1, 3],
        dayOfWeek: { type: 'any' },
        years: [2026, 2027],
      },
    });
    expect(parse('cron(0 9 ? * MON-FRI *)')).toMatchObject({ cron: { dayOfWeek: { type: 'days', days: [2, 3, 4, 5, 6] } } });
    expect(parse('cron(0 9 ? * SUN,7 *)')).toMatchObject({ cron: { dayOfWeek: { type: 'days', days: [1, 7] } } });
    expect(parse('rate(90 minutes)')).toMatchObject({ kind: 'rate', value: 90, unit: 'minute', periodMs: 5_400_000 });
    expect(parse('rate(2 days)')).toMatchObject({ periodMs: 172_800_000 });
    expect(parse('at(2026-05-01T09:08:07)')).toMatchObject({ at: { year: 2026, month: 5, day: 1, hour: 9, minute: 8, second: 7 } });
    expect(isOneTime(parse('at(2026-05-01T09:08:07)'))).toBe(true);
    expect(isOneTime(parse('rate(1 day)'))).toBe(false);
  });
});

describe('parseScheduleExpression: invalid forms name the field and the reason', () => {
  it.each([
    ['', 'expression is empty: use cron(...), rate(...) or at(...)'],
    ['every day', 'expression must be cron(...), rate(...) or at(...), e.g. rate(5 minutes) or cron(0 9 ? * MON-FRI *)'],
    [' rate(5 minutes)', 'expression must be cron(...), rate(...) or at(...), e.g. rate(5 minutes) or cron(0 9 ? * MON-FRI *)'],
    ['RATE(5 minutes)', 'expression must be cron(...), rate(...) or at(...), e.g. rate(5 minutes) or cron(0 9 ? * MON-FRI *)'],
    [`cron(${'0 '.repeat(130)})`, 'expression is longer than 256 characters'],
    // cron: shape and the ? rule
    ['cron(0 9 * * ?)', 'cron needs six fields separated by spaces: minutes hours day-of-month month day-of-week year'],
    ['cron(0 0 9 * * ? *)', 'cron needs six fields separated by spaces: minutes hours day-of-month month day-of-week year'],
    ['cron( 0 9 * * ? *)', 'cron needs six fields separated by spaces: minutes hours day-of-month month day-of-week year'],
    ['cron(0\t9 * * ? *)', 'cron needs six fields separated by spaces: minutes hours day-of-month month day-of-week year'],
    ['cron(0 9 * * * *)', "cron: one of day-of-month ('*') and day-of-week ('*') must be ?, e.g. cron(0 9 * * ? *)"],
    ['cron(0 9 1 * MON *)', "cron: one of day-of-month ('1') and day-of-week ('MON') must be ?, e.g. cron(0 9 * * ? *)"],
    ['cron(0 9 ? * ? *)', 'cron: only one of day-of-month and day-of-week may be ?'],
    // cron: values and ranges
    ['cron(60 9 * * ? *)', 'cron minutes: 60 is out of range 0-59'],
    ['cron(0 24 * * ? *)', 'cron hours: 24 is out of range 0-23'],
    ['cron(0 9 0 * ? *)', 'cron day-of-month: 0 is out of range 1-31'],
    ['cron(0 9 32 * ? *)', 'cron day-of-month: 32 is out of range 1-31'],
    ['cron(0 9 * 13 ? *)', 'cron month: 13 is out of range 1-12'],
    ['cron(0 9 * JANUARY ? *)', "cron month: 'JANUARY' is not a number or JAN-DEC"],
    ['cron(0 9 ? * 0 *)', 'cron day-of-week: 0 is out of range 1-7 (1 = SUN ... 7 = SAT)'],
    ['cron(0 9 ? * 8 *)', 'cron day-of-week: 8 is out of range 1-7 (1 = SUN ... 7 = SAT)'],
    ['cron(0 9 ? * MON-FUN *)', "cron day-of-week: 'FUN' is not a number or SUN-SAT"],
    ['cron(0 9 * * ? 1969)', 'cron year: 1969 is out of range 1970-2199'],
    ['cron(0 9 * * ? 2200)', 'cron year: 2200 is out of range 1970-2199'],
    ['cron(a 9 * * ? *)', "cron minutes: 'a' is not a number"],
    ['cron(-1 9 * * ? *)', "cron minutes: '-1' is not a range such as 1-5"],
    ['cron(1-2-3 9 * * ? *)', "cron minutes: '1-2-3' is not a range such as 1-5"],
    ['cron(0 22-2 * * ? *)', "cron hours: the range '22-2' runs backwards (write it as two ranges joined by a comma)"],
    ['cron(0 9 ? * FRI-MON *)', "cron day-of-week: the range 'FRI-MON' runs backwards (write it as two ranges joined by a comma)"],
    ['cron(1,,2 9 * * ? *)', "cron minutes: empty item in '1,,2'"],
    ['cron(1, 9 * * ? *)', "cron minutes: empty item in '1,'"],
    // cron: increments
    ['cron(0/0 9 * * ? *)', "cron minutes: the increment in '0/0' must be a whole number 1-59"],
    ['cron(0/60 9 * * ? *)', "cron minutes: the increment in '0/60' must be a whole number 1-59"],
    ['cron(0 */24 * * ? *)', "cron hours: the increment in '*/24' must be a whole number 1-23"],
    ['cron(0/5/2 9 * * ? *)', "cron minutes: '0/5/2' has more than one /"],
    ['cron(/5 9 * * ? *)', "cron minutes: '/5' has no start before the /"],
    ['cron(0 9 ? * 2/2 *)', "cron day-of-week: / increments are not allowed in day-of-week ('2/2')"],
    // cron: ?, L, W, #
    ['cron(? 9 * * ? *)', "cron minutes: '?' is only allowed in day-of-month or day-of-week"],
    ['cron(0 9 * L ? *)', "cron month: 'L' is only allowed in day-of-month or day-of-week"],
    ['cron(0 9 ?,1 * ? *)', "cron day-of-month: '?' stands alone in its field"],
    ['cron(0 9 ? * MON,? *)', "cron day-of-week: '?' stands alone in its field"],
    ['cron(0 9 L-3 * ? *)', "cron day-of-month: 'L-3': L and W stand alone, as L, LW or one day such as 15W"],
    ['cron(0 9 1,15W * ? *)', "cron day-of-month: '1,15W': L and W stand alone, as L, LW or one day such as 15W"],
    ['cron(0 9 1-5W * ? *)', "cron day-of-month: '1-5W': L and W stand alone, as L, LW or one day such as 15W"],
    ['cron(0 9 32W * ? *)', 'cron day-of-month: 32 is out of range 1-31'],
    ['cron(0 9 ? * 5L,6 *)', "cron day-of-week: '5L,6': L stands alone, as L or one weekday such as 6L (the last Friday)"],
    ['cron(0 9 ? * 8L *)', 'cron day-of-week: 8 is out of range 1-7 (1 = SUN ... 7 = SAT)'],
    ['cron(0 9 ? * 3#1,6#3 *)', "cron day-of-week: '3#1,6#3': # takes one weekday and stands alone, such as 3#2 (the second Tuesday)"],
    ['cron(0 9 ? * 3#6 *)', "cron day-of-week: '3#6': the occurrence after # must be 1-5"],
    ['cron(0 9 ? * 3#0 *)', "cron day-of-week: '3#0': the occurrence after # must be 1-5"],
    ['cron(0 9 ? * 0#1 *)', 'cron day-of-week: 0 is out of range 1-7 (1 = SUN ... 7 = SAT)'],
    ['cron(0 9 L * 6L *)', "cron: one of day-of-month ('L') and day-of-week ('6L') must be ?, e.g. cron(0 9 * * ? *)"],
    // rate
    ['rate(5)', 'rate takes a value and a unit separated by a space, e.g. rate(5 minutes)'],
    ['rate(5  minutes )', 'rate takes a value and a unit separated by a space, e.g. rate(5 minutes)'],
    ['rate(0 minutes)', "rate value '0' must be a whole number from 1 to 1000000 without leading zeros"],
    ['rate(-5 minutes)', "rate value '-5' must be a whole number from 1 to 1000000 without leading zeros"],
    ['rate(1.5 hours)', "rate value '1.5' must be a whole number from 1 to 1000000 without leading zeros"],
    ['rate(05 minutes)', "rate value '05' must be a whole number from 1 to 1000000 without leading zeros"],
    ['rate(1000001 days)', "rate value '1000001' must be a whole number from 1 to 1000000 without leading zeros"],
    ['rate(5 weeks)', "rate unit 'weeks' must be minute(s), hour(s) or day(s)"],
    ['rate(30 seconds)', "rate unit 'seconds' must be minute(s), hour(s) or day(s)"],
    ['rate(5 Minutes)', "rate unit 'Minutes' must be minute(s), hour(s) or day(s)"],
    ['rate(1 minutes)', 'rate(1 minutes) takes the singular unit: rate(1 minute)'],
    ['rate(5 minute)', 'rate(5 minute) takes the plural unit: rate(5 minutes)'],
    ['rate(2 day)', 'rate(2 day) takes the plural unit: rate(2 days)'],
    // at
    [
      'at(2026-05-01 09:00:00)',
      "at takes a local date and time as yyyy-mm-ddThh:mm:ss, e.g. at(2026-05-01T09:00:00), not '2026-05-01 09:00:00'",
    ],
    ['at(2026-05-01T09:00)', "at takes a local date and time as yyyy-mm-ddThh:mm:ss, e.g. at(2026-05-01T09:00:00), not '2026-05-01T09:00'"],
    [
      'at(2026-05-01T09:00:00Z)',
      "at takes a local date and time as yyyy-mm-ddThh:mm:ss, e.g. at(2026-05-01T09:00:00), not '2026-05-01T09:00:00Z'",
    ],
    [
      'at(2026-05-01T09:00:00+02:00)',
      "at takes a local date and time as yyyy-mm-ddThh:mm:ss, e.g. at(2026-05-01T09:00:00), not '2026-05-01T09:00:00+02:00'",
    ],
    ['at(2026-02-29T09:00:00)', 'at: 2026-02-29 is not a date (day 29)'],
    ['at(2026-04-31T09:00:00)', 'at: 2026-04-31 is not a date (day 31)'],
    ['at(2026-13-01T09:00:00)', 'at: month 13 is out of range 1-12'],
    ['at(2026-00-01T09:00:00)', 'at: month 0 is out of range 1-12'],
    ['at(2026-05-01T24:00:00)', 'at: hour 24 is out of range 0-23'],
    ['at(2026-05-01T09:60:00)', 'at: minute 60 is out of range 0-59'],
    ['at(2026-05-01T09:00:60)', 'at: second 60 is out of range 0-59'],
    ['at(1969-12-31T23:59:59)', 'at: year 1969 is out of range 1970-2199'],
  ])('%j: %s', (source, message) => {
    expect(messageOf(source)).toBe(message);
  });

  it('is what the zod schemas report for a route body', () => {
    const result = ScheduleExpressionString.safeParse('rate(5 minute)');
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ message: 'rate(5 minute) takes the plural unit: rate(5 minutes)', path: [] }),
    ]);
    expect(ScheduleExpressionString.safeParse('rate(5 minutes)').success).toBe(true);
    expect(ScheduleExpressionString.safeParse(5).success).toBe(false);
    expect(ScheduleTimezone.safeParse('Europe/Berlin').success).toBe(true);
    expect(ScheduleTimezone.safeParse('Mars/Olympus').error?.issues[0]?.message).toBe(
      'must be an IANA time zone name such as Europe/Berlin or UTC',
    );
  });
});

describe('docs/schedules.md', () => {
  it('shows expressions that are accepted, and the fire times it says', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../docs/schedules.md'), 'utf8');
    const table = /<!-- schedule expressions: start -->([\s\S]*?)<!-- schedule expressions: end -->/.exec(readme)?.[1] ?? '';
    const examples = [...table.matchAll(/`((?:cron|rate|at)\([^`]*\))`/g)].map((m) => m[1] as string);
    expect(examples.length).toBeGreaterThanOrEqual(12);
    for (const source of examples) expect(messageOf(source), source).toBe('accepted');
    expect(fires('cron(0/15 8-17 * * ? *)', 'UTC', '2026-05-04T17:30:00Z', 2)).toEqual([
      '2026-05-04T17:45:00+00:00',
      '2026-05-05T08:00:00+00:00',
    ]);
    expect(fires('cron(0 0 1 1 ? 2027-2029)', 'UTC', '2026-05-04T00:00:00Z', 9).map((s) => s.slice(0, 4))).toEqual([
      '2027',
      '2028',
      '2029',
    ]);
  });
});

describe('isValidTimezone', () => {
  it.each([
    ['UTC', true],
    ['Europe/Berlin', true],
    ['America/New_York', true],
    ['America/Argentina/Buenos_Aires', true],
    ['America/Port-au-Prince', true],
    ['Asia/Kolkata', true],
    ['Australia/Lord_Howe', true],
    ['Etc/GMT+5', true],
    ['US/Eastern', true],
    ['Asia/Calcutta', true],
    ['europe/berlin', false],
    ['EUROPE/BERLIN', false],
    ['utc', false],
    ['+01:00', false],
    ['UTC+1', false],
    ['Mars/Olympus', false],
    ['Europe/', false],
    ['', false],
    [`Europe/${'X'.repeat(50)}`, false],
  ])('%j → %s', (timezone, valid) => {
    expect(isValidTimezone(timezone)).toBe(valid);
  });
});

describe('formatInZone', () => {
  it('writes ISO 8601 with the offset the zone has at that instant', () => {
    const at = Date.parse('2026-03-29T01:00:00Z');
    expect(formatInZone(at, 'Europe/Berlin')).toBe('2026-03-29T03:00:00+02:00');
    expect(formatInZone(at - 1, 'Europe/Berlin')).toBe('2026-03-29T01:59:59+01:00');
    expect(formatInZone(at, 'UTC')).toBe('2026-03-29T01:00:00+00:00');
    expect(formatInZone(at, 'America/New_York')).toBe('2026-03-28T21:00:00-04:00');
    expect(formatInZone(at, 'Asia/Kolkata')).toBe('2026-03-29T06:30:00+05:30');
    expect(formatInZone(at, 'Australia/Lord_Howe')).toBe('2026-03-29T12:00:00+11:00');
    expect(formatInZone(Date.parse('2026-07-01T00:00:00Z'), 'Australia/Lord_Howe')).toBe('2026-07-01T10:30:00+10:30');
    expect(formatInZone(Date.parse('2026-12-31T23:59:59.999Z'), 'Pacific/Kiritimati')).toBe('2027-01-01T13:59:59+14:00');
    expect(formatInZone(0, 'UTC')).toBe('1970-01-01T00:00:00+00:00');
    expect(Date.parse(formatInZone(at, 'America/New_York'))).toBe(at);
  });
});

describe('nextFireTimes: cron across DST', () => {
  it('Europe/Berlin spring forward (2026-03-29, 02:00 → 03:00): 02:30 does not exist and is skipped', () => {
    expect(fires('cron(30 2 * * ? *)', 'Europe/Berlin', '2026-03-27T12:00:00+01:00', 3)).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-30T02:30:00+02:00',
      '2026-03-31T02:30:00+02:00',
    ]);
    expect(fires('cron(30 1 * * ? *)', 'Europe/Berlin', '2026-03-28T12:00:00+01:00', 2)).toEqual([
      '2026-03-29T01:30:00+01:00',
      '2026-03-30T01:30:00+02:00',
    ]);
    expect(fires('cron(0 * * * ? *)', 'Europe/Berlin', '2026-03-29T00:30:00+01:00', 3)).toEqual([
      '2026-03-29T01:00:00+01:00',
      '2026-03-29T03:00:00+02:00',
      '2026-03-29T04:00:00+02:00',
    ]);
    expect(fires('cron(*/20 2 * * ? *)', 'Europe/Berlin', '2026-03-28T23:00:00+01:00', 2)).toEqual([
      '2026-03-30T02:00:00+02:00',
      '2026-03-30T02:20:00+02:00',
    ]);
  });

  it('Europe/Berlin fall back (2026-10-25, 03:00 → 02:00): 02:30 occurs twice and fires once, at the first', () => {
    expect(fires('cron(30 2 * * ? *)', 'Europe/Berlin', '2026-10-23T12:00:00+02:00', 4)).toEqual([
      '2026-10-24T02:30:00+02:00',
      '2026-10-25T02:30:00+02:00',
      '2026-10-26T02:30:00+01:00',
      '2026-10-27T02:30:00+01:00',
    ]);
    expect(fires('cron(0 * * * ? *)', 'Europe/Berlin', '2026-10-25T00:30:00+02:00', 4)).toEqual([
      '2026-10-25T01:00:00+02:00',
      '2026-10-25T02:00:00+02:00',
      '2026-10-25T03:00:00+01:00',
      '2026-10-25T04:00:00+01:00',
    ]);
    // Asked during the repeated hour, after its first pass: the next fire is the next day's.
    expect(fires('cron(30 2 * * ? *)', 'Europe/Berlin', '2026-10-25T02:10:00+01:00', 1)).toEqual(['2026-10-26T02:30:00+01:00']);
    expect(fires('cron(30 2 * * ? *)', 'Europe/Berlin', '2026-10-25T02:10:00+02:00', 1)).toEqual(['2026-10-25T02:30:00+02:00']);
  });

  it('America/New_York spring forward (2026-03-08, 02:00 → 03:00) and fall back (2026-11-01, 02:00 → 01:00)', () => {
    expect(fires('cron(30 2 * * ? *)', 'America/New_York', '2026-03-06T12:00:00-05:00', 3)).toEqual([
      '2026-03-07T02:30:00-05:00',
      '2026-03-09T02:30:00-04:00',
      '2026-03-10T02:30:00-04:00',
    ]);
    expect(fires('cron(30 1 * * ? *)', 'America/New_York', '2026-03-07T12:00:00-05:00', 2)).toEqual([
      '2026-03-08T01:30:00-05:00',
      '2026-03-09T01:30:00-04:00',
    ]);
    expect(fires('cron(0 * * * ? *)', 'America/New_York', '2026-03-08T00:30:00-05:00', 3)).toEqual([
      '2026-03-08T01:00:00-05:00',
      '2026-03-08T03:00:00-04:00',
      '2026-03-08T04:00:00-04:00',
    ]);
    expect(fires('cron(30 1 * * ? *)', 'America/New_York', '2026-10-31T12:00:00-04:00', 3)).toEqual([
      '2026-11-01T01:30:00-04:00',
      '2026-11-02T01:30:00-05:00',
      '2026-11-03T01:30:00-05:00',
    ]);
    expect(fires('cron(30 2 * * ? *)', 'America/New_York', '2026-10-31T12:00:00-04:00', 2)).toEqual([
      '2026-11-01T02:30:00-05:00',
      '2026-11-02T02:30:00-05:00',
    ]);
    expect(fires('cron(0/30 * * * ? *)', 'America/New_York', '2026-11-01T00:15:00-04:00', 5)).toEqual([
      '2026-11-01T00:30:00-04:00',
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:30:00-04:00',
      '2026-11-01T02:00:00-05:00',
      '2026-11-01T02:30:00-05:00',
    ]);
  });

  it('a zone with a 30-minute DST shift (Australia/Lord_Howe) follows the same two rules', () => {
    // 2026-10-04 02:00 → 02:30 (+10:30 → +11:00); 2026-04-05 02:00 → 01:30 (+11:00 → +10:30).
    expect(fires('cron(15 2 * * ? *)', 'Australia/Lord_Howe', '2026-10-03T12:00:00+10:30', 2)).toEqual([
      '2026-10-05T02:15:00+11:00',
      '2026-10-06T02:15:00+11:00',
    ]);
    expect(fires('cron(45 1 * * ? *)', 'Australia/Lord_Howe', '2026-04-04T12:00:00+11:00', 2)).toEqual([
      '2026-04-05T01:45:00+11:00',
      '2026-04-06T01:45:00+10:30',
    ]);
  });
});

describe('nextFireTimes: rate', () => {
  it('is a fixed duration in real time from startAt: an hour is 60 minutes and a day 24 hours across DST', () => {
    expect(fires('rate(1 hour)', 'Europe/Berlin', '2026-03-29T00:00:00+01:00', 4, { startAt: '2026-03-29T00:30:00+01:00' })).toEqual([
      '2026-03-29T00:30:00+01:00',
      '2026-03-29T01:30:00+01:00',
      '2026-03-29T03:30:00+02:00',
      '2026-03-29T04:30:00+02:00',
    ]);
    expect(fires('rate(1 hour)', 'Europe/Berlin', '2026-10-25T01:00:00+02:00', 4, { startAt: '2026-10-25T00:30:00+02:00' })).toEqual([
      '2026-10-25T01:30:00+02:00',
      '2026-10-25T02:30:00+02:00',
      '2026-10-25T02:30:00+01:00',
      '2026-10-25T03:30:00+01:00',
    ]);
    expect(fires('rate(1 hour)', 'America/New_York', '2026-11-01T00:00:00-04:00', 3, { startAt: '2026-11-01T00:00:00-04:00' })).toEqual([
      '2026-11-01T01:00:00-04:00',
      '2026-11-01T01:00:00-05:00',
      '2026-11-01T02:00:00-05:00',
    ]);
    expect(fires('rate(1 day)', 'America/New_York', '2026-03-06T12:00:00-05:00', 3, { startAt: '2026-03-07T09:00:00-05:00' })).toEqual([
      '2026-03-07T09:00:00-05:00',
      '2026-03-08T10:00:00-04:00',
      '2026-03-09T10:00:00-04:00',
    ]);
  });

  it('counts from startAt whatever `after` is, and from `after` when there is no startAt', () => {
    const startAt = '2026-05-01T10:07:00Z';
    expect(fires('rate(15 minutes)', 'UTC', '2026-05-01T10:07:00Z', 2, { startAt })).toEqual([
      '2026-05-01T10:22:00+00:00',
      '2026-05-01T10:37:00+00:00',
    ]);
    expect(fires('rate(15 minutes)', 'UTC', '2026-05-01T10:06:59Z', 1, { startAt })).toEqual(['2026-05-01T10:07:00+00:00']);
    expect(fires('rate(15 minutes)', 'UTC', '2026-05-03T00:00:00Z', 1, { startAt })).toEqual(['2026-05-03T00:07:00+00:00']);
    expect(fires('rate(5 minutes)', 'UTC', '2026-05-01T10:03:30Z', 2)).toEqual(['2026-05-01T10:08:30+00:00', '2026-05-01T10:13:30+00:00']);
    expect(fires('rate(15 minutes)', 'UTC', '2026-05-01T00:00:00Z', 10, { startAt, endAt: '2026-05-01T10:37:00Z' })).toEqual([
      '2026-05-01T10:07:00+00:00',
      '2026-05-01T10:22:00+00:00',
      '2026-05-01T10:37:00+00:00',
    ]);
  });
});

describe('nextFireTimes: L, W and #', () => {
  const days = (source: string, after: string, count: number) => fires(source, 'UTC', after, count).map((s) => s.slice(0, 10));

  it('L is the last day of the month (29 in a leap February), LW its last weekday', () => {
    expect(days('cron(0 9 L * ? *)', '2028-01-15T00:00:00Z', 3)).toEqual(['2028-01-31', '2028-02-29', '2028-03-31']);
    expect(days('cron(0 9 L 2 ? *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-02-28', '2027-02-28', '2028-02-29']);
    // 2026-01-31 and 2026-10-31 are Saturdays, 2026-05-31 a Sunday.
    expect(days('cron(0 9 LW 1,5,6,10 ? *)', '2026-01-01T00:00:00Z', 4)).toEqual(['2026-01-30', '2026-05-29', '2026-06-30', '2026-10-30']);
  });

  it('nW is the weekday nearest day n, never in another month, and no day when the month has no day n', () => {
    // 2026-08-15 is a Saturday, 2026-02-15 and 2026-03-15 Sundays.
    expect(days('cron(0 9 15W 2,3,8 ? *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-02-16', '2026-03-16', '2026-08-14']);
    // 2026-08-01 is a Saturday: 1W is Monday the 3rd, not Friday July 31.
    expect(days('cron(0 9 1W 7,8 ? *)', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-07-01', '2026-08-03']);
    // 2026-05-31 is a Sunday and the month's last day: 31W is Friday the 29th. June has no 31st.
    expect(days('cron(0 9 31W 5,6,7 ? *)', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-05-29', '2026-07-31']);
  });

  it('nL is the month’s last weekday n, n#k its k-th, L alone Saturday', () => {
    expect(days('cron(0 9 ? * 6L *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-30', '2026-02-27', '2026-03-27']);
    expect(days('cron(0 9 ? * 3#2 *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-13', '2026-02-10', '2026-03-10']);
    expect(days('cron(0 9 ? * MON#1 *)', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-05', '2026-02-02']);
    // A fifth Friday only in the months that have one.
    expect(days('cron(0 9 ? * 6#5 *)', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-30', '2026-05-29', '2026-07-31']);
    expect(days('cron(0 9 ? * L *)', '2026-01-01T00:00:00Z', 2)).toEqual(['2026-01-03', '2026-01-10']);
    expect(days('cron(0 9 ? * 1 *)', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-04']);
    expect(days('cron(0 9 ? * 7 *)', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-01-03']);
  });
});

describe('nextFireTimes: years, windows, counts', () => {
  it('stops at the year field and at 2199', () => {
    expect(fires('cron(0 0 1 1 ? 2198-2199)', 'UTC', '2026-01-01T00:00:00Z', 5)).toEqual([
      '2198-01-01T00:00:00+00:00',
      '2199-01-01T00:00:00+00:00',
    ]);
    expect(fires('cron(59 23 31 12 ? *)', 'UTC', '2199-12-31T23:58:00Z', 5)).toEqual(['2199-12-31T23:59:00+00:00']);
    expect(fires('cron(0 0 * * ? *)', 'UTC', '2199-12-31T00:00:00Z', 5)).toEqual([]);
    expect(nextFireTimes(parse('cron(0 0 * * ? *)'), { timezone: 'UTC', after: Number.MAX_SAFE_INTEGER, count: 5 })).toEqual([]);
    expect(nextFireTimes(parse('cron(0 0 * * ? *)'), { timezone: 'UTC', after: Number.NaN, count: 5 })).toEqual([]);
    expect(nextFireTimes(parse('cron(0 0 1 1 ? *)'), { timezone: 'UTC', after: -1e15, count: 1 })).toEqual([0]);
    expect(fires('cron(0 9 * * ? 2025)', 'UTC', '2026-01-01T00:00:00Z', 5)).toEqual([]);
    expect(fires('cron(0 0 1 1 ? 1970)', 'UTC', '1969-12-31T00:00:00Z', 5)).toEqual(['1970-01-01T00:00:00+00:00']);
    // 30 February never comes.
    expect(fires('cron(0 0 30 2 ? *)', 'UTC', '2026-01-01T00:00:00Z', 1)).toEqual([]);
    expect(fires('cron(0 0 29 FEB ? *)', 'UTC', '2026-01-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T00:00:00+00:00',
      '2032-02-29T00:00:00+00:00',
    ]);
  });

  it('keeps fire times strictly after `after`, at or after startAt and at or before endAt', () => {
    expect(fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T09:00:00Z', 1)).toEqual(['2026-05-02T09:00:00+00:00']);
    expect(fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T08:59:59.999Z', 1)).toEqual(['2026-05-01T09:00:00+00:00']);
    expect(fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T00:00:00Z', 2, { startAt: '2026-06-10T09:00:00Z' })).toEqual([
      '2026-06-10T09:00:00+00:00',
      '2026-06-11T09:00:00+00:00',
    ]);
    expect(
      fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T00:00:00Z', 9, { startAt: '2026-06-10T09:00:01Z', endAt: '2026-06-13T09:00:00Z' }),
    ).toEqual(['2026-06-11T09:00:00+00:00', '2026-06-12T09:00:00+00:00', '2026-06-13T09:00:00+00:00']);
    expect(fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T00:00:00Z', 5, { endAt: '2026-05-01T08:59:59Z' })).toEqual([]);
    expect(fires('cron(0 9 * * ? *)', 'UTC', '2026-05-01T00:00:00Z', 0)).toEqual([]);
    expect(fires('rate(1 minute)', 'UTC', '2026-05-01T00:00:00Z', 0)).toEqual([]);
  });
});

describe('nextFireTimes: at()', () => {
  it('fires once, at the local time in the schedule’s zone', () => {
    expect(fires('at(2026-05-01T09:00:00)', 'Europe/Berlin', '2026-04-01T00:00:00Z', 3)).toEqual(['2026-05-01T09:00:00+02:00']);
    expect(fires('at(2026-05-01T09:00:00)', 'America/New_York', '2026-04-01T00:00:00Z', 3)).toEqual(['2026-05-01T09:00:00-04:00']);
    expect(nextFireTimes(parse('at(2026-05-01T09:00:30)'), { timezone: 'Asia/Kolkata', after: 0, count: 1 })).toEqual([
      Date.parse('2026-05-01T03:30:30Z'),
    ]);
    expect(fires('at(2026-05-01T09:00:00)', 'Europe/Berlin', '2026-05-01T09:00:00+02:00', 3)).toEqual([]);
    expect(fires('at(2026-05-01T09:00:00)', 'Europe/Berlin', '2026-05-01T08:59:59+02:00', 3)).toEqual(['2026-05-01T09:00:00+02:00']);
  });

  it('has no fire time in a DST gap, fires at the first of a repeated time, and ignores startAt and endAt as EventBridge does', () => {
    expect(fires('at(2026-03-29T02:30:00)', 'Europe/Berlin', '2026-01-01T00:00:00Z', 1)).toEqual([]);
    expect(fires('at(2026-03-08T02:30:00)', 'America/New_York', '2026-01-01T00:00:00Z', 1)).toEqual([]);
    expect(fires('at(2026-10-25T02:30:00)', 'Europe/Berlin', '2026-01-01T00:00:00Z', 1)).toEqual(['2026-10-25T02:30:00+02:00']);
    expect(fires('at(2026-11-01T01:30:00)', 'America/New_York', '2026-11-01T01:30:00-04:00', 1)).toEqual([]);
    expect(
      fires('at(2026-05-01T09:00:00)', 'UTC', '2026-01-01T00:00:00Z', 1, {
        startAt: '2026-06-01T00:00:00Z',
        endAt: '2026-02-01T00:00:00Z',
      }),
    ).toEqual(['2026-05-01T09:00:00+00:00']);
  });

  it('instantsOf finds none, one or two instants for a wall time', () => {
    const w = { year: 2026, month: 10, day: 25, hour: 2, minute: 30, second: 0 };
    expect(instantsOf(w, 'Europe/Berlin')).toEqual([Date.parse('2026-10-25T00:30:00Z'), Date.parse('2026-10-25T01:30:00Z')]);
    expect(instantsOf({ ...w, month: 3, day: 29 }, 'Europe/Berlin')).toEqual([]);
    expect(instantsOf({ ...w, month: 5 }, 'Europe/Berlin')).toEqual([Date.parse('2026-05-25T00:30:00Z')]);
    expect(localTimeIn(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toEqual(w);
  });
});

/** Each zone with the instants of its DST transitions in 2026 (none for UTC and Asia/Kolkata). */
const TRANSITIONS: [string, string[]][] = [
  ['UTC', ['2026-06-15T12:00:00Z']],
  ['Asia/Kolkata', ['2026-03-29T01:00:00Z']],
  ['Europe/Berlin', ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z']],
  ['America/New_York', ['2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z']],
  ['Australia/Lord_Howe', ['2026-04-04T15:00:00Z', '2026-10-03T15:30:00Z']], // 30-minute shifts
  ['America/Santiago', ['2026-04-05T03:00:00Z', '2026-09-06T04:00:00Z']], // at midnight
  ['Pacific/Chatham', ['2026-04-04T14:00:00Z', '2026-09-26T14:00:00Z']], // +12:45 / +13:45
];
const zoneAndTransition = fc
  .constantFrom(...TRANSITIONS)
  .chain(([zone, at]) => fc.tuple(fc.constant(zone), fc.constantFrom(...at.map(Date.parse))));

const item = (min: number, max: number) =>
  fc.oneof(
    fc.integer({ min, max }).map(String),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
    fc.tuple(fc.integer({ min, max }), fc.integer({ min: 1, max: max - min })).map(([a, s]) => `${a}/${s}`),
    fc.integer({ min: 1, max: max - min }).map((s) => `*/${s}`),
  );
const listOf = (min: number, max: number) =>
  fc.oneof(
    fc.constant('*'),
    fc.array(item(min, max), { minLength: 1, maxLength: 3 }).map((a) => a.join(',')),
  );
const days = fc.oneof(
  fc.constant(['*', '?']),
  fc.constant(['?', '*']),
  listOf(1, 31).map((d) => [d, '?']),
  fc.constantFrom(['L', '?'], ['LW', '?'], ['?', 'L'], ['?', '6L'], ['?', '2#1'], ['?', '1#5'], ['15W', '?'], ['1W', '?'], ['31W', '?']),
  fc
    .array(fc.constantFrom('SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', '1', '7', 'MON-FRI'), { minLength: 1, maxLength: 3 })
    .map((d) => ['?', d.join(',')]),
);
const cronSource = fc
  .tuple(listOf(0, 59), listOf(0, 23), days, fc.oneof(fc.constant('*'), listOf(1, 12)), fc.constantFrom('*', '2026-2028', '2026,2028'))
  .map(([m, h, [dom, dow], mon, y]) => `cron(${m} ${h} ${dom} ${mon} ${dow} ${y})`);

describe('properties', () => {
  it('parseScheduleExpression never throws, whatever the string', () => {
    const near = fc
      .tuple(
        fc.constantFrom('cron(', 'rate(', 'at(', ''),
        fc.array(fc.constantFrom(...'0123456789 ,-*/?LW#TJANMONSUN:'.split(''), ' ', 'minutes', 'hour', 'day', 'FRI'), { maxLength: 30 }),
        fc.constantFrom(')', '', '))'),
      )
      .map(([a, b, c]) => a + b.join('') + c);
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), near, cronSource), (s) => {
        const parsed = parseScheduleExpression(s);
        if (!parsed.ok) expect(parsed.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('every fire time matches the cron at its first occurrence, ascending, and none is missed (checked minute by minute)', () => {
    fc.assert(
      fc.property(cronSource, zoneAndTransition, fc.integer({ min: -23 * 60, max: 60 }), (source, [timezone, transition], shift) => {
        const parsed = parseScheduleExpression(source);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok || parsed.value.kind !== 'cron') return;
        // A window of 25 hours with the transition in it.
        const after = transition + shift * 60_000 + 17_000;
        const endAt = after + 25 * 3_600_000;
        const got = nextFireTimes(parsed.value, { timezone, after, endAt, count: 10_000 });
        // The reference: every minute in the window whose wall time matches, unless the same wall time was already shown earlier.
        const expected: number[] = [];
        for (let t = Math.ceil(after / 60_000) * 60_000; t <= endAt; t += 60_000) {
          const w = localTimeIn(t, timezone);
          if (!matches(parsed.value.cron, w)) continue;
          const shown = [30, 60, 120].some((m) => JSON.stringify(localTimeIn(t - m * 60_000, timezone)) === JSON.stringify(w));
          if (!shown) expected.push(t);
        }
        expect(got).toEqual(expected);
        const limited = nextFireTimes(parsed.value, { timezone, after, count: 3 });
        expect(limited.slice(0, Math.min(3, expected.length))).toEqual(expected.slice(0, 3));
        for (let i = 1; i < limited.length; i++) expect(limited[i]).toBeGreaterThan(limited[i - 1] as number);
        for (const t of limited) expect(matches(parsed.value.cron, localTimeIn(t, timezone))).toBe(true);
      }),
      { numRuns: 120 },
    );
  });

  it('in UTC, without L, W and #, the fire times are croner’s for the same fields (an independent reading of lists, ranges, steps, names)', () => {
    const max = [59, 23, 31, 12, 7, 2199];
    // croner takes seconds first, ? as *, and a/step only as a-max/step.
    const toCroner = (fields: string[]) =>
      `0 ${fields.map((f, i) => (f === '?' ? '*' : f.replace(/(^|,)(\d+)\/(\d+)/g, `$1$2-${max[i]}/$3`))).join(' ')}`;
    const plain = cronSource.filter((s) => !/[LW#]/.test(s));
    fc.assert(
      fc.property(plain, fc.integer({ min: Date.parse('2025-06-01T00:00:00Z'), max: Date.parse('2028-06-01T00:00:00Z') }), (source, at) => {
        const after = at - (at % 60_000) + 17_000;
        const ours = nextFireTimes(parse(source), { timezone: 'UTC', after, count: 5 });
        const pattern = toCroner(source.slice(5, -1).split(' '));
        const cron = new Cron(pattern, { timezone: 'UTC', paused: true, domAndDow: true, alternativeWeekdays: true, mode: '7-part' });
        expect(ours, pattern).toEqual(cron.nextRuns(5, new Date(after)).map((d) => d.getTime()));
      }),
      { numRuns: 300 },
    );
  });

  it('rate fire times are startAt plus whole periods, ascending, after `after`, within endAt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.constantFrom('minute', 'hour', 'day'),
        fc.integer({ min: 0, max: 4e12 }),
        fc.integer({ min: -1e10, max: 1e10 }),
        fc.integer({ min: 1, max: 20 }),
        (n, unit, startAt, delta, count) => {
          const expr = parse(`rate(${n} ${n === 1 ? unit : `${unit}s`})`);
          if (expr.kind !== 'rate') return;
          const after = startAt + delta;
          const got = nextFireTimes(expr, { timezone: 'UTC', after, startAt, count });
          expect(got).toHaveLength(count);
          expect(got[0]).toBeGreaterThan(after);
          expect((got[0] as number) - expr.periodMs <= Math.max(after, startAt - 1)).toBe(true);
          got.forEach((t, i) => {
            expect((t - startAt) % expr.periodMs).toBe(0);
            if (i > 0) expect(t - (got[i - 1] as number)).toBe(expr.periodMs);
          });
        },
      ),
    );
  });
});
