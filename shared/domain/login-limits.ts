import {
  authFailSubject,
  clearTwoWindows,
  giveBack,
  hasMark,
  putMark,
  type TwoWindowResult,
  takeFromTwoWindows,
} from '../db/entities/counter.ts';
import { rateLimited } from '../errors.ts';
import { addressUnit } from '../ip-ranges.ts';
import { checkBudget, forgiveFailure, overBudget, recordFailure } from './auth-failures.ts';

/**
 * Failed sign-ins allowed, each a two-window limit (counter.ts: no span of a window's length holds more), an address counted as its unit
 * (an IPv4 address, an IPv6 /64: `addressUnit`):
 * - `perEmailAndIp` per email from one address (the lockout a stranger elsewhere cannot trigger);
 * - `perIp` per address across emails (password spraying);
 * - `perAccount` per email across addresses, in `accountWindowSeconds` (guessing from many addresses).
 *   Over it, only addresses that signed in to that email before (in the last `knownDays`) go on being
 *   checked; others wait (429 with `Retry-After`) until the window has room again. So an attacker
 *   who spreads guesses over many addresses gets `perAccount` of them per window, and the owner, who
 *   signs in from where they did before, is not kept out by it.
 * Only failures stay counted: every attempt reserves a unit of each before the password is checked,
 * and a success gives them back.
 */
export const LOGIN_LIMITS = {
  windowSeconds: 300,
  perEmailAndIp: 10,
  perIp: 50,
  accountWindowSeconds: 900,
  perAccount: 30,
  knownDays: 30,
} as const;

const L = LOGIN_LIMITS;

/** The attempt's reserved units, to settle once the password is checked. */
export type LoginAttempt = { email: string; unit: string; now: number; tookAccount: boolean };

const subjects = (email: string, unit: string) => ({
  emailAddr: authFailSubject('LOGIN-EMAIL-ADDR', email, unit),
  addr: authFailSubject('LOGIN-ADDR', unit),
  account: authFailSubject('LOGIN-EMAIL', email),
  known: authFailSubject('LOGIN-KNOWN', email, unit),
});

const limited = (...results: TwoWindowResult[]) => rateLimited(Math.max(1, ...results.map((r) => r.retryAfter)), {});

/**
 * Reserve one attempt for `email` (normalized) from `ip`, or throw 429: the address's failure budget
 * shared with every route (auth-failures.ts) and the three sign-in limits, in parallel.
 */
export async function reserveLogin(email: string, ip: string, now: number): Promise<LoginAttempt> {
  const unit = addressUnit(ip);
  checkBudget(unit, now);
  const s = subjects(email, unit);
  const [byEmail, byIp, byAccount, over] = await Promise.all([
    takeFromTwoWindows(s.emailAddr, L.perEmailAndIp, L.windowSeconds, now),
    takeFromTwoWindows(s.addr, L.perIp, L.windowSeconds, now),
    takeFromTwoWindows(s.account, L.perAccount, L.accountWindowSeconds, now),
    recordFailure(unit, now),
  ]);
  const giveBackTaken = () =>
    Promise.all([
      byEmail.allowed ? giveBack(s.emailAddr, L.windowSeconds, now) : undefined,
      byIp.allowed ? giveBack(s.addr, L.windowSeconds, now) : undefined,
      byAccount.allowed ? giveBack(s.account, L.accountWindowSeconds, now) : undefined,
    ]);
  if (over !== undefined) throw overBudget(over);
  if (!byEmail.allowed || !byIp.allowed) {
    // A refused attempt is not one more guess at the account: its unit there goes back.
    if (byAccount.allowed) await giveBack(s.account, L.accountWindowSeconds, now);
    throw limited(byEmail, byIp);
  }
  if (!byAccount.allowed && !(await hasMark(s.known, now))) {
    await giveBackTaken();
    throw limited(byAccount);
  }
  return { email, unit, now, tookAccount: byAccount.allowed };
}

/** A successful sign-in: its units given back (the email + address count reset), the address remembered as the email's. */
export async function loginSucceeded(a: LoginAttempt): Promise<void> {
  const s = subjects(a.email, a.unit);
  await Promise.all([
    clearTwoWindows(s.emailAddr, L.windowSeconds, a.now),
    giveBack(s.addr, L.windowSeconds, a.now),
    a.tookAccount ? giveBack(s.account, L.accountWindowSeconds, a.now) : undefined,
    forgiveFailure(a.unit, a.now),
    putMark(s.known, L.knownDays * 86_400, a.now),
  ]);
}
