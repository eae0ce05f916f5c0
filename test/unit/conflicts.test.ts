import { describe, expect, it } from 'vitest';
import { lostRace, Refused, refused, retryConflicts } from '../../shared/db/conflicts.ts';

const named = (name: string, message = name) => Object.assign(new Error(message), { name });

describe('retryConflicts', () => {
  it('tries a write again while a transaction is in flight on it, and no other failure', async () => {
    let tries = 0;
    await expect(
      retryConflicts(async () => {
        tries++;
        if (tries < 3) throw named('TransactionConflictException');
        return 'done';
      }),
    ).resolves.toBe('done');
    expect(tries).toBe(3);
    tries = 0;
    const condition = named('ConditionalCheckFailedException');
    await expect(
      retryConflicts(async () => {
        tries++;
        throw condition;
      }),
    ).rejects.toBe(condition);
    expect(tries).toBe(1);
  });

  it('read-decide-write: each try gets its number, a lost race tries again, and `exhausted` answers after the last', async () => {
    const seen: number[] = [];
    const out = await retryConflicts(
      async (attempt) => {
        seen.push(attempt);
        throw attempt % 2 ? new Refused() : named('ConditionalCheckFailedException');
      },
      4,
      { retryOn: lostRace, exhausted: () => 'gave up' },
    );
    expect(out).toBe('gave up');
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it('`exhausted` may throw (a 409), and `refused` retries only a try that said so', async () => {
    let tries = 0;
    await expect(
      retryConflicts(
        async () => {
          tries++;
          throw new Refused();
        },
        3,
        {
          retryOn: refused,
          exhausted: () => {
            throw new Error('CHANGED');
          },
        },
      ),
    ).rejects.toThrow('CHANGED');
    expect(tries).toBe(3);
    const condition = named('ConditionalCheckFailedException');
    await expect(retryConflicts(async () => Promise.reject(condition), 3, { retryOn: refused })).rejects.toBe(condition);
  });
});
