import { isTransactionConflict } from '../errors.ts';

/**
 * Do a write again, after a short random pause, while DynamoDB refuses it for a transaction in flight
 * on one of its items (at most `attempts` tries). Its conditions are checked afresh each time.
 */
export async function retryConflicts<T>(write: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (e) {
      if (!isTransactionConflict(e) || attempt >= attempts) throw e;
      await pause(attempt);
    }
  }
}

/** A short random pause before try number `attempt + 1` of a write that lost a race. */
export const pause = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * 20 * (attempt + 1)));
