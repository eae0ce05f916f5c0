import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../../clients.ts';
import { isConditionFailure } from '../../errors.ts';
import { retryConflicts } from '../conflicts.ts';
import type { TransactItem } from '../transact.ts';
import { buildUpdate } from '../update.ts';
import { type Execution, executionKey, storedFields } from './execution.ts';
import { activeSortKey } from './execution-index.ts';
import { heldBy } from './execution-writes.ts';

// The writes of a worker that holds a run: the claim that takes it for one queue message, and the
// checkpoints it writes while its lease lives (shared/engine/session.ts).

/**
 * Claim the run for message `dispatch`: one conditional write that removes the dispatch id and sets
 * the lease (`set`), which moves the run to the leased part of the active index. Only while the run
 * still waits for exactly this dispatch (PENDING, or RUNNING between invocations). Returns the run as
 * it was before, or undefined when it did not wait for this dispatch.
 */
export async function claimRun(
  run: { accountId: string; executionId: string },
  dispatch: string,
  set: { status: 'RUNNING'; lease: NonNullable<Execution['lease']>; updatedAt: number },
): Promise<Record<string, unknown> | undefined> {
  try {
    const { Attributes } = await retryConflicts(() =>
      db().send(
        new UpdateCommand({
          ...buildUpdate(
            executionKey(run.accountId, run.executionId),
            { ...set, GSI2SK: activeSortKey({ executionId: run.executionId, lease: set.lease }, set.updatedAt) },
            ['dispatch'],
            {
              expression: 'dispatch = :d AND #status IN (:pending, :running)',
              names: { '#status': 'status' },
              values: { ':d': dispatch, ':pending': 'PENDING', ':running': 'RUNNING' },
            },
          ),
          ReturnValues: 'ALL_OLD',
        }),
      ),
    );
    return Attributes;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/**
 * A checkpoint's write of the run: its changed fields `set`, less `remove`, conditional on `owner`'s
 * live lease and no cancel asked for. A run let go of (its lease removed) moves in the active index to
 * where it now waits: for its message (`D#`) or a person (`W#`).
 */
export function checkpointUpdate(
  e: Execution,
  set: Record<string, unknown>,
  remove: readonly string[],
  owner: string,
  now: number,
): TransactItem {
  const placed = remove.includes('lease') && !remove.includes('GSI2SK') ? { GSI2SK: activeSortKey({ ...e, lease: undefined }, now) } : {};
  return { Update: buildUpdate(executionKey(e.accountId, e.executionId), storedFields({ ...set, ...placed }), remove, heldBy(owner, now)) };
}
