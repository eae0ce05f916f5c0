import { type Execution, executionMove, moveOldExecution, parseExecution } from './execution.ts';
import { queryPage } from '../query.ts';
import { shardOf } from '../shards.ts';

/**
 * The active index (GSI2, sparse): every in-progress run, so the sweeps never scan. Partitions by
 * trigger kind (the startup sweep reads only the webhook runs) and by a shard of the id (a hot index
 * partition would throttle the base table's writes). It is one key for the whole deployment, so it is
 * sized for the heat model's (c), 1,000 accounts at 10 runs a second: about 5 index write units a run
 * (claim, release, finish) are 50,000 a second, under 400 a shard with 128 (the gate: 500). It may
 * only grow (a run keeps its shard until it leaves the index; the sweeps read every shard).
 * The sort key puts runs a worker holds under `L#<lease expiry>`, so the crash sweep reads only
 * expired leases, and every other in-progress run (pending, waiting, sleeping) under `W#`. It
 * changes when a worker claims or releases the run, never at a checkpoint (the lease is not extended).
 */
export const ACTIVE_SHARDS = 128;
export type ActiveKind = 'webhook' | 'api';
export const activeKind = (trigger: Execution['trigger']): ActiveKind => (trigger === 'webhook' ? 'webhook' : 'api');
const activePartition = (kind: ActiveKind, shard: number) => `RUN#ACTIVE#${kind}#${shard}`;
const LEASED = 'L#';
const leaseSortKey = (expiresAt: number) => `${LEASED}${String(expiresAt).padStart(15, '0')}`;
/** GSI2SK: where the run sits in its active partition, from its lease. */
export const activeSortKey = (executionId: string, lease: Execution['lease']) =>
  lease ? `${leaseSortKey(lease.expiresAt)}#${executionId}` : `W#${executionId}`;
/** Both active-index attributes of an in-progress run. */
export const activeIndex = (e: Pick<Execution, 'executionId' | 'trigger' | 'lease'>) => ({
  GSI2PK: activePartition(activeKind(e.trigger), shardOf(e.executionId, ACTIVE_SHARDS)),
  GSI2SK: activeSortKey(e.executionId, e.lease),
});
/** What a run that stops being in progress (finished, interrupted) removes. */
export const ACTIVE_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'] as const;

/**
 * One page of a shard of the active index: every run in it, or only leases that expired before
 * `expiredBefore`. A run of the shape before (`executionMove`) is moved to its key as it is read, so
 * the sweeps act on runs in progress across the deploy as on any other.
 */
export async function listActive(
  kind: ActiveKind,
  shard: number,
  expiredBefore: number | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
) {
  const page = await queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: expiredBefore === undefined ? 'GSI2PK = :pk' : 'GSI2PK = :pk AND GSI2SK BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': activePartition(kind, shard),
        ...(expiredBefore === undefined ? {} : { ':from': LEASED, ':to': leaseSortKey(expiredBefore) }),
      },
    },
    (i) => i,
    limit,
    startKey,
  );
  const items = await Promise.all(
    page.items.map((i) => (executionMove.matches(i) ? moveOldExecution(String(i.accountId), String(i.executionId)) : i)),
  );
  return { items: items.flatMap((i) => (i ? [parseExecution(i)] : [])), lastKey: page.lastKey };
}
