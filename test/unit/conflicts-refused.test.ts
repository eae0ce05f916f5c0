import { describe, expect, it } from 'vitest';
import { lostRace, Refused, refused, retryConflicts } from '../../shared/db/conflicts.ts';

const named = (name: string) => Object.assign(new Error(name), { name });

/** A try that finds its write refused without an exception (`'refused'`) throws `Refused` to be tried again. */
describe('retryConflicts with Refused', () => {
  it('with `retryOn: refused` tries again only a try that said it lost, each with its number, then `exhausted` answers', async () => {
    const seen: number[] = [];
    const out = await retryConflicts(
      async (attempt) => {
        seen.push(attempt);
        throw new Refused();
      },
      { attempts: 3, retryOn: refused, exhausted: () => 'gave up' },
    );
    expect(out).toBe('gave up');
    expect(seen).toEqual([1, 2, 3]);
    const condition = named('ConditionalCheckFailedException');
    let tries = 0;
    await expect(
      retryConflicts(
        async () => {
          tries++;
          throw condition;
        },
        { attempts: 3, retryOn: refused },
      ),
    ).rejects.toBe(condition);
    expect(tries).toBe(1);
  });

  it('`exhausted` may throw (a 409) instead of answering; the default retries no Refused', async () => {
    await expect(
      retryConflicts(
        async () => {
          throw new Refused();
        },
        {
          retryOn: refused,
          exhausted: () => {
            throw new Error('CHANGED');
          },
        },
      ),
    ).rejects.toThrow('CHANGED');
    await expect(retryConflicts(async () => Promise.reject(new Refused()))).rejects.toBeInstanceOf(Refused);
    expect(lostRace(new Refused())).toBe(false);
  });
});
