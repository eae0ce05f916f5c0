import { describe, expect, it } from 'vitest';
import { keptChanging, lostRace, retryConflicts } from '../../shared/db/conflicts.ts';

const refusal = (name: string) => Object.assign(new Error(name), { name });
const inFlight = () => refusal('TransactionConflictException');
const lostCondition = () => refusal('ConditionalCheckFailedException');

/** A write refused by `errors` in turn, then answering with the try number. */
const writeRefusedBy = (...errors: Error[]) => {
  const tries: number[] = [];
  const write = async (attempt: number) => {
    tries.push(attempt);
    const e = errors[attempt - 1];
    if (e) throw e;
    return attempt;
  };
  return { write, tries };
};

describe('retryConflicts', () => {
  it('tries again while a transaction is in flight (6 tries by default), numbering the tries', async () => {
    const { write, tries } = writeRefusedBy(inFlight(), inFlight(), inFlight(), inFlight(), inFlight());
    expect(await retryConflicts(write)).toBe(6);
    expect(tries).toEqual([1, 2, 3, 4, 5, 6]);
    await expect(retryConflicts(writeRefusedBy(...Array.from({ length: 6 }, inFlight)).write)).rejects.toThrow(
      'TransactionConflictException',
    );
  });

  it('throws at once what it is not told to retry: by default a lost condition', async () => {
    const { write, tries } = writeRefusedBy(lostCondition());
    await expect(retryConflicts(write)).rejects.toThrow('ConditionalCheckFailedException');
    expect(tries).toEqual([1]);
  });

  it('with retryOn: lostRace, reads and writes again after a lost condition too, up to `attempts`', async () => {
    const { write, tries } = writeRefusedBy(lostCondition(), inFlight());
    expect(await retryConflicts(write, { retryOn: lostRace, attempts: 3 })).toBe(3);
    expect(tries).toEqual([1, 2, 3]);
  });

  it('gives what `exhausted` gives when the last try was refused as well', async () => {
    const refused = writeRefusedBy(lostCondition(), lostCondition());
    expect(await retryConflicts<number | string>(refused.write, { retryOn: lostRace, attempts: 2, exhausted: () => 'gave up' })).toBe(
      'gave up',
    );
    expect(refused.tries).toEqual([1, 2]);
    await expect(
      retryConflicts(writeRefusedBy(lostCondition()).write, { retryOn: lostRace, attempts: 1, exhausted: keptChanging('execution') }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
  });
});
