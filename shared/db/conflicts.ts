import { conflict, isConditionFailure, isTransactionConflict } from '../errors.ts';

/**
 * A write that lost a race: its condition no longer held (the item changed since it was read), or a
 * transaction was in flight on one of its items. Nothing was written.
 */
export const lostRace = (e: unknown): boolean => isConditionFailure(e) || isTransactionConflict(e);

export type RetryOptions<T> = {
  /** Tries in all (default 6: the pauses between them add up to at most about 0.3 s). */
  attempts?: number;
  /**
   * The refusals that earn another try (default `isTransactionConflict`). A write conditional on
   * what it read passes `lostRace` and reads again in each try, so a lost condition decides afresh.
   */
  retryOn?: (e: unknown) => boolean;
  /** What the call gives when its last try was refused as well (default: that refusal is thrown). */
  exhausted?: (e: unknown) => T;
};

/**
 * Do a write again, after a short random pause, while DynamoDB refuses it for a transaction in flight
 * on one of its items (or, with `retryOn`, for the refusals named), at most `attempts` tries. Its
 * conditions are checked afresh each time. `write` gets the number of its try (1 = the first).
 */
export async function retryConflicts<T>(write: (attempt: number) => Promise<T>, opts: RetryOptions<T> = {}): Promise<T> {
  const { attempts = 6, retryOn = isTransactionConflict, exhausted } = opts;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(attempt);
    } catch (e) {
      if (!retryOn(e)) throw e;
      if (attempt >= attempts) {
        if (exhausted) return exhausted(e);
        throw e;
      }
      await pause(attempt);
    }
  }
}

/** For `exhausted`: every try lost its race, the request is refused (409 `CONFLICT`, "The <what> kept changing"). */
export const keptChanging = (what: string) => (): never => {
  throw conflict('CONFLICT', `The ${what} kept changing; try again.`);
};

/**
 * A write conditional on what was read lost its race (`lostRace`) and what it wrote is still there,
 * changed by another: 409 `CONFLICT`, the same for every resource (a 404 says it is gone).
 */
export const changedMeanwhile = (what: string) => conflict('CONFLICT', `The ${what} was changed meanwhile; read it again.`);

/**
 * A random pause before try number `attempt + 1` of a write that lost a race: exponential backoff with
 * full jitter (up to 10, 20, 40, … ms, at most 400), so writers that met once spread apart.
 */
export const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(400, 10 * 2 ** attempt)));

/**
 * Thrown by a try whose write answered that it was refused (a write that reports `'refused'` rather
 * than throwing: a decision, a callback report, a channel replaced as read), so that `retryConflicts`
 * with `retryOn: refused` reads again and tries again.
 */
export class Refused extends Error {
  constructor() {
    super('The write was refused: what it was conditional on changed meanwhile.');
    this.name = 'Refused';
  }
}

/** `retryOn` for tries that say themselves when they lost (`Refused`); any other failure of theirs is not retried. */
export const refused = (e: unknown): boolean => e instanceof Refused;
