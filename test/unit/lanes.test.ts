import { afterEach, describe, expect, it } from 'vitest';
import { RATE_WINDOW_SECONDS } from '../../shared/db/entities/rate-counters.ts';
import { requestsInWindow } from '../../shared/domain/rate-limit.ts';
import { forgetHeavyAccounts, heavyAccountsKept, laneOf, MAX_HEAVY_ACCOUNTS } from '../../shared/engine/lanes.ts';
import { config } from '../../shared/config.ts';

// Which runs lane an account's new run goes to (shared/engine/lanes.ts): the heavy lane once its
// requests in the current rate window exceed the threshold, and for the rest of that window and the
// next in this instance.

const WINDOW = RATE_WINDOW_SECONDS * 1000;
/** 10 s into a window. */
const T0 = 1_000 * WINDOW + 10_000;
const THRESHOLD = 250;
const lane = (accountId: string, requests: number | undefined, now = T0) => laneOf(accountId, requests, now, THRESHOLD);

afterEach(() => forgetHeavyAccounts());

describe('the lane of a new run', () => {
  it('is the main lane up to the threshold, the heavy lane above it', () => {
    expect(lane('acc_a', 1)).toBeUndefined();
    expect(lane('acc_a', THRESHOLD)).toBeUndefined();
    expect(lane('acc_b', THRESHOLD + 1)).toBe('heavy');
    expect(lane('acc_c', undefined)).toBeUndefined();
  });

  it('takes the threshold from HEAVY_ACCOUNT_REQUESTS_PER_MINUTE (250 by default) when none is given', () => {
    expect(config().HEAVY_ACCOUNT_REQUESTS_PER_MINUTE).toBe(250);
    expect(laneOf('acc_d', 250, T0)).toBeUndefined();
    expect(laneOf('acc_d', 251, T0)).toBe('heavy');
  });

  it("counts an account's requests over several counters as the count on one times the counters, but on the account item", () => {
    expect(requestsInWindow(7, 1, 0)).toBe(7);
    expect(requestsInWindow(7, 34, 5)).toBe(238);
    expect(requestsInWindow(8, 34, 33)).toBe(272);
    // So a spread account is heavy once the counter its request landed on has counted past threshold / counters.
    expect(lane('acc_spread', requestsInWindow(7, 34, 5))).toBeUndefined();
    expect(lane('acc_spread', requestsInWindow(8, 34, 5))).toBe('heavy');
    // The account item (counter 0) also takes every instance's first request of the account: its count
    // stands for itself (a burst of 50 new instances is 50 requests, not 50 × 34).
    expect(requestsInWindow(50, 34, 0)).toBe(50);
    expect(lane('acc_new_instances', requestsInWindow(50, 34, 0))).toBeUndefined();
    expect(lane('acc_item_over', requestsInWindow(THRESHOLD + 1, 34, 0))).toBe('heavy');
  });

  it('stays heavy for the rest of the window and the whole next one, whatever the count, then goes back', () => {
    expect(lane('acc_e', THRESHOLD + 1)).toBe('heavy');
    // The same window, a low count (another counter's): still heavy; a trigger that carries no count too.
    expect(lane('acc_e', 3, T0 + 1_000)).toBe('heavy');
    expect(lane('acc_e', undefined, T0 + 1_000)).toBe('heavy');
    // The next window starts at 0: the flood goes on in the heavy lane.
    const next = T0 - 10_000 + WINDOW;
    expect(lane('acc_e', 1, next)).toBe('heavy');
    expect(lane('acc_e', 1, next + WINDOW - 1)).toBe('heavy');
    // Two windows on, not seen heavy since: the main lane, and forgotten.
    expect(lane('acc_e', 1, next + WINDOW)).toBeUndefined();
    expect(heavyAccountsKept()).toBe(0);
    // Seen heavy again in the next window: held until the end of the one after it.
    expect(lane('acc_f', THRESHOLD + 1)).toBe('heavy');
    expect(lane('acc_f', THRESHOLD + 1, next)).toBe('heavy');
    expect(lane('acc_f', 1, next + WINDOW)).toBe('heavy');
    expect(lane('acc_f', 1, next + 2 * WINDOW)).toBeUndefined();
  });

  it('keeps one account apart from another', () => {
    expect(lane('acc_g', THRESHOLD + 1)).toBe('heavy');
    expect(lane('acc_h', 1)).toBeUndefined();
  });

  it(`remembers at most ${MAX_HEAVY_ACCOUNTS} accounts: the expired go first, then the longest remembered`, () => {
    // Half of them seen heavy a window earlier (they expire one window before the others).
    const early = T0 - WINDOW;
    for (let i = 0; i < MAX_HEAVY_ACCOUNTS / 2; i++) lane(`acc_old${i}`, THRESHOLD + 1, early);
    for (let i = 0; i < MAX_HEAVY_ACCOUNTS / 2; i++) lane(`acc_new${i}`, THRESHOLD + 1);
    expect(heavyAccountsKept()).toBe(MAX_HEAVY_ACCOUNTS);
    // A window later, the early half has expired: one more account drops all of them, none of the others.
    const later = T0 + WINDOW;
    lane('acc_one_more', THRESHOLD + 1, later);
    expect(heavyAccountsKept()).toBe(MAX_HEAVY_ACCOUNTS / 2 + 1);
    expect(lane('acc_new0', undefined, later)).toBe('heavy');
    // Full of live ones: the one remembered longest goes, the rest stay.
    for (let i = 0; i < MAX_HEAVY_ACCOUNTS / 2 - 1; i++) lane(`acc_more${i}`, THRESHOLD + 1, later);
    expect(heavyAccountsKept()).toBe(MAX_HEAVY_ACCOUNTS);
    lane('acc_last', THRESHOLD + 1, later);
    expect(heavyAccountsKept()).toBe(MAX_HEAVY_ACCOUNTS);
    expect(lane('acc_new0', undefined, later)).toBeUndefined();
    expect(lane('acc_new1', undefined, later)).toBe('heavy');
    expect(lane('acc_last', undefined, later)).toBe('heavy');
  });
});
