import { Execution } from './execution.ts';
import { queryPage } from '../query.ts';

/**
 * The active index (GSI2, sparse): every in-progress run, so the sweeps never scan. Partitions by
 * trigger kind (the startup sweep reads only the webhook runs) and by a shard of the id (a hot index
 * partition would throttle the base table's writes; raise ACTIVE_SHARDS past ~1,000 run updates a second per shard).
 * The sort key puts runs a worker holds under `L#<lease expiry>`, so the crash sweep reads only
 * expired leases, and every other in-progress run (pending, waiting, sleeping) under `W#`. It
 * changes when a worker claims or releases the run, never at a checkpoint (the lease is not extended).
 */
export const ACTIVE_SHARDS = 8;
export type ActiveKind = 'webhook' | 'api';
export const activeKind = (trigger: Execution['trigger']): ActiveKind => (trigger === 'webhook' ? 'webhook' : 'api');
const activePartition = (kind: ActiveKind, shard: number) => `RUN#ACTIVE#${kind}#${shard}`;
const shardOf = (executionId: string) => [...executionId.slice(-4)].reduce((n, c) => n + c.charCodeAt(0), 0) % ACTIVE_SHARDS;
const LEASED = 'L#';
const leaseSortKey = (expiresAt: number) => `${LEASED}${String(expiresAt).padStart(15, '0')}`;
/** GSI2SK: where the run sits in its active partition, from its lease. */
export const activeSortKey = (executionId: string, lease: Execution['lease']) =>
  lease ? `${leaseSortKey(lease.expiresAt)}#${executionId}` : `W#${executionId}`;
/** Both active-index attributes of an in-progress run. */
export const activeIndex = (e: Pick<Execution, 'executionId' | 'trigger' | 'lease'>) => ({
  GSI2PK: activePartition(activeKind(e.trigger), shardOf(e.executionId)),
  GSI2SK: activeSortKey(e.executionId, e.lease),
});
/** What a run that stops being in progress (finished, interrupted) removes. */
export const ACTIVE_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'] as const;

/** One page of a shard of the active index: every run in it, or only leases that expired before `expiredBefore`. */
export const listActive = (
  kind: ActiveKind,
  shard: number,
  expiredBefore: number | undefined,
  limit: number,
  startKey?: Record<string, unknown>,
) =>
  queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: expiredBefore === undefined ? 'GSI2PK = :pk' : 'GSI2PK = :pk AND GSI2SK BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': activePartition(kind, shard),
        ...(expiredBefore === undefined ? {} : { ':from': LEASED, ':to': leaseSortKey(expiredBefore) }),
      },
    },
    (i) => Execution.parse(i),
    limit,
    startKey,
  );
