/**
 * EventBridge Scheduler's cron fields (Quartz's syntax without seconds): `min hour day-of-month month day-of-week year`.
 * Parsing is strict: where AWS documents a form we accept it; where AWS is silent we reject the form (a clear 400
 * here is better than a schedule AWS refuses later), e.g. wrap-around ranges (`22-2`), `/` in day-of-week, `L-3`.
 * Matching works on local wall-clock fields; time zones and DST are the caller's (expression.ts).
 */

export type DayOfMonth =
  | { type: 'any' }
  | { type: 'days'; days: number[] }
  | { type: 'last' } // L
  | { type: 'lastWeekday' } // LW
  | { type: 'nearestWeekday'; day: number }; // 15W
export type DayOfWeek =
  | { type: 'any' }
  | { type: 'days'; days: number[] } // 1-7 = SUN-SAT
  | { type: 'last'; weekday: number } // 6L: the month's last Friday
  | { type: 'nth'; weekday: number; n: number }; // 3#2: the month's second Tuesday
export type CronSpec = {
  minutes: number[];
  hours: number[];
  dayOfMonth: DayOfMonth;
  months: number[];
  dayOfWeek: DayOfWeek;
  years: number[];
};
export type LocalTime = { year: number; month: number; day: number; hour: number; minute: number };

type Field = { name: string; min: number; max: number; maxStep: number; names?: string[]; steps?: false };
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const F = {
  minutes: { name: 'minutes', min: 0, max: 59, maxStep: 59 },
  hours: { name: 'hours', min: 0, max: 23, maxStep: 23 },
  dayOfMonth: { name: 'day-of-month', min: 1, max: 31, maxStep: 31 },
  month: { name: 'month', min: 1, max: 12, maxStep: 12, names: MONTHS },
  dayOfWeek: { name: 'day-of-week', min: 1, max: 7, maxStep: 7, names: WEEKDAYS, steps: false },
  year: { name: 'year', min: 1970, max: 2199, maxStep: 229 },
} satisfies Record<string, Field>;

class CronError extends Error {}
const fail = (field: Field, why: string): never => {
  throw new CronError(`cron ${field.name}: ${why}`);
};

function value(field: Field, text: string): number {
  const named = field.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + 1;
  if (/^[?LW#]/i.test(text))
    fail(
      field,
      field.name.startsWith('day') ? `'${text}' stands alone in its field` : `'${text}' is only allowed in day-of-month or day-of-week`,
    );
  if (!/^\d{1,4}$/.test(text)) {
    const names = field.names ? ` or ${field.names[0]}-${field.names.at(-1)}` : '';
    fail(field, `'${text}' is not a number${names}`);
  }
  const n = Number(text);
  if (n < field.min || n > field.max) {
    const hint = field === F.dayOfWeek ? ' (1 = SUN ... 7 = SAT)' : '';
    fail(field, `${n} is out of range ${field.min}-${field.max}${hint}`);
  }
  return n;
}

/** A list of `*`, `n`, `a-b`, each optionally `/step`: the sorted distinct values. */
function list(field: Field, text: string): number[] {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail(field, `empty item in '${text}'`);
    const [base = '', step, extra] = item.split('/');
    if (extra !== undefined) fail(field, `'${item}' has more than one /`);
    let by = 1;
    if (step !== undefined) {
      if (field.steps === false) fail(field, `/ increments are not allowed in ${field.name} ('${item}')`);
      if (!/^\d{1,4}$/.test(step) || Number(step) < 1 || Number(step) > field.maxStep)
        fail(field, `the increment in '${item}' must be a whole number 1-${field.maxStep}`);
      by = Number(step);
    }
    let from: number;
    let to: number;
    if (base === '*') [from, to] = [field.min, field.max];
    else if (base.includes('-')) {
      const [a = '', b = '', more] = base.split('-');
      if (more !== undefined || a === '' || b === '') fail(field, `'${base}' is not a range such as 1-5`);
      [from, to] = [value(field, a), value(field, b)];
      if (from > to) fail(field, `the range '${base}' runs backwards (write it as two ranges joined by a comma)`);
    } else {
      if (base === '') fail(field, `'${item}' has no start before the /`);
      from = value(field, base);
      to = step === undefined ? from : field.max;
    }
    for (let v = from; v <= to; v += by) out.add(v);
  }
  return [...out].sort((a, b) => a - b);
}

// Quartz reads names, L and W in any case.
function dayOfMonth(text: string): DayOfMonth {
  const t = text.toUpperCase();
  if (t === '?' || t === '*') return { type: 'any' };
  if (t === 'L') return { type: 'last' };
  if (t === 'LW') return { type: 'lastWeekday' };
  const w = /^(\d{1,2})W$/.exec(t);
  if (w) return { type: 'nearestWeekday', day: value(F.dayOfMonth, w[1] as string) };
  if (/[LW]/.test(t)) fail(F.dayOfMonth, `'${text}': L and W stand alone, as L, LW or one day such as 15W`);
  return { type: 'days', days: list(F.dayOfMonth, text) };
}

function dayOfWeek(text: string): DayOfWeek {
  const t = text.toUpperCase();
  if (t === '?' || t === '*') return { type: 'any' };
  if (t === 'L') return { type: 'days', days: [7] }; // Quartz: L alone is the week's last day, SAT
  const last = /^([A-Z]{3}|\d)L$/.exec(t);
  if (last) return { type: 'last', weekday: value(F.dayOfWeek, last[1] as string) };
  const nth = /^([A-Z]{3}|\d)#(\d+)$/.exec(t);
  if (nth) {
    const n = Number(nth[2]);
    if (n < 1 || n > 5) fail(F.dayOfWeek, `'${text}': the occurrence after # must be 1-5`);
    return { type: 'nth', weekday: value(F.dayOfWeek, nth[1] as string), n };
  }
  if (text.includes('#')) fail(F.dayOfWeek, `'${text}': # takes one weekday and stands alone, such as 3#2 (the second Tuesday)`);
  if (t.includes('L'))
    // no weekday name has an L
    fail(F.dayOfWeek, `'${text}': L stands alone, as L or one weekday such as 6L (the last Friday)`);
  return { type: 'days', days: list(F.dayOfWeek, text) };
}

/** The fields inside `cron(...)`; throws nothing, returns the message of the first fault. */
export function parseCronFields(text: string): { ok: true; value: CronSpec } | { ok: false; message: string } {
  const parts = text.split(/ +/);
  if (parts.length !== 6 || parts.includes(''))
    return { ok: false, message: 'cron needs six fields separated by spaces: minutes hours day-of-month month day-of-week year' };
  const [min, hour, dom, mon, dow, year] = parts as [string, string, string, string, string, string];
  try {
    const spec: CronSpec = {
      minutes: list(F.minutes, min),
      hours: list(F.hours, hour),
      dayOfMonth: dayOfMonth(dom),
      months: list(F.month, mon),
      dayOfWeek: dayOfWeek(dow),
      years: list(F.year, year),
    };
    if (dom === '?' && dow === '?') return { ok: false, message: 'cron: only one of day-of-month and day-of-week may be ?' };
    if (dom !== '?' && dow !== '?')
      return { ok: false, message: `cron: one of day-of-month ('${dom}') and day-of-week ('${dow}') must be ?, e.g. cron(0 9 * * ? *)` };
    return { ok: true, value: spec };
  } catch (e) {
    if (e instanceof CronError) return { ok: false, message: e.message };
    throw e;
  }
}

export const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
/** 1 = SUN ... 7 = SAT, as in the day-of-week field. */
export const weekdayOf = (year: number, month: number, day: number) => new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

function nearestWeekday(year: number, month: number, day: number, last: number): number {
  const wd = weekdayOf(year, month, day);
  if (wd === 7) return day === 1 ? 3 : day - 1; // Saturday: the Friday before, or Monday the 3rd (W never leaves the month)
  if (wd === 1) return day === last ? day - 2 : day + 1; // Sunday: the Monday after, or the Friday before at the month's end
  return day;
}

export function matchesDay(c: CronSpec, year: number, month: number, day: number): boolean {
  const last = daysInMonth(year, month);
  const dom = c.dayOfMonth;
  const dow = c.dayOfWeek;
  switch (dom.type) {
    case 'days':
      if (!dom.days.includes(day)) return false;
      break;
    case 'last':
      if (day !== last) return false;
      break;
    case 'lastWeekday':
      if (day !== nearestWeekday(year, month, last, last)) return false;
      break;
    case 'nearestWeekday':
      if (dom.day > last || day !== nearestWeekday(year, month, dom.day, last)) return false;
  }
  const wd = weekdayOf(year, month, day);
  switch (dow.type) {
    case 'days':
      return dow.days.includes(wd);
    case 'last':
      return wd === dow.weekday && day + 7 > last;
    case 'nth':
      return wd === dow.weekday && Math.ceil(day / 7) === dow.n;
  }
  return true;
}

export function matches(c: CronSpec, t: LocalTime): boolean {
  return (
    c.years.includes(t.year) &&
    c.months.includes(t.month) &&
    c.hours.includes(t.hour) &&
    c.minutes.includes(t.minute) &&
    matchesDay(c, t.year, t.month, t.day)
  );
}

/** The first local time at or after `from` that the fields match, or null when none is left before 2200. */
export function nextLocalMatch(c: CronSpec, from: LocalTime): LocalTime | null {
  for (const year of c.years) {
    if (year < from.year) continue;
    const sameYear = year === from.year;
    for (const month of c.months) {
      if (sameYear && month < from.month) continue;
      const sameMonth = sameYear && month === from.month;
      const last = daysInMonth(year, month);
      for (let day = sameMonth ? from.day : 1; day <= last; day++) {
        if (!matchesDay(c, year, month, day)) continue;
        const sameDay = sameMonth && day === from.day;
        for (const hour of c.hours) {
          if (sameDay && hour < from.hour) continue;
          const sameHour = sameDay && hour === from.hour;
          const minute = c.minutes.find((m) => !sameHour || m >= from.minute);
          if (minute !== undefined) return { year, month, day, hour, minute };
        }
      }
    }
  }
  return null;
}
