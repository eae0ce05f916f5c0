import { isConditionFailure, isTransactionConflict } from '../errors.ts';

/** What a `retryConflicts` caller may change: which failures try again, and what happens when every try lost. */
export type RetryOptions<T> = {
  /** The failures that try again; by default a transaction in flight (`isTransactionConflict`). */
  retryOn?: (e: unknown) => boolean;
  /** Once every try lost: the answer, or (it throws) the error, e.g. a 409 `..._CHANGED`; by default the last failure is thrown. */
  exhausted?: () => T;
};

/**
 * Do a write again, after a short random pause, while DynamoDB refuses it for a transaction in flight
 * on one of its items (at most `attempts` tries). Its conditions are checked afresh each time.
 *
 * With `retryOn: lostRace`, the same loop for read-decide-write: each try (`write(attempt)`, from 1)
 * reads what it decides on and writes on the condition that it is still so; a try whose condition was
 * refused (changed meanwhile) runs again, reading afresh.
 */
export async function retryConflicts<T>(write: (attempt: number) => Promise<T>, attempts = 4, opts: RetryOptions<T> = {}): Promise<T> {
  const retries = opts.retryOn ?? isTransactionConflict;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(attempt);
    } catch (e) {
      if (!retries(e)) throw e;
      if (attempt >= attempts) {
        if (opts.exhausted) return opts.exhausted();
        throw e;
      }
      await pause(attempt);
    }
  }
}

/** Thrown by a try whose write answered that it was refused (rather than throwing), so that it is tried again. */
export class Refused extends Error {
  constructor() {
    super('The write was refused: what it was conditional on changed meanwhile.');
    this.name = 'Refused';
  }
}

/** A try lost a race: its write's condition failed, a transaction was in flight on an item (nothing written), or it said so (`Refused`). */
export const lostRace = (e: unknown): boolean => e instanceof Refused || isConditionFailure(e) || isTransactionConflict(e);

/** Only a try that said it lost (`Refused`): for tries whose other writes' failures must not repeat them. */
export const refused = (e: unknown): boolean => e instanceof Refused;

/** A short random pause before try number `attempt + 1` of a write that lost a race. */
export const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * 20 * (attempt + 1)));
