import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../../clients.ts';
import { config } from '../../config.ts';
import { buildUpdate } from '../update.ts';
import { type Execution, executionKey, executionMove, moveOldExecution, parseExecution } from './execution.ts';
import { queryPage } from '../query.ts';
import { shardOf } from '../shards.ts';

/**
 * The active index (GSI2, sparse): every in-progress run, so the sweeps never scan. Partitions by
 * trigger kind (the startup sweep reads only the webhook runs) and by a shard of the id (a hot index
 * partition would throttle the base table's writes). It is one key for the whole deployment, so it is
 * sized for the heat model's (c), 1,000 accounts at 10 runs a second: about 4 index write units a run
 * (the start's put, the claim's delete and put, the end's delete) are 40,000 a second, about 313 a
 * shard with 128 (the gate: 500). It may
 * only grow (a run keeps its shard until it leaves the index; the sweeps read every shard).
 * The sort key puts runs a worker holds under `L#<lease expiry>`, so the crash sweep reads only
 * expired leases; runs handed to a queue message (PENDING, or RUNNING between workers or asleep)
 * under `D#<due>`, when the message should have claimed them, so the sweep sends it again if it never
 * went out (the write that handed the run over and the message's send are two calls: an invocation
 * cut off between them leaves the run waiting for a message nobody sent); and runs waiting for a
 * person or a callback under `W#`. It changes when a worker claims or lets go of the run and when a
 * decision or report hands it to a message, never at a checkpoint (the lease is not extended).
 */
export const ACTIVE_SHARDS = 128;
export type ActiveKind = 'webhook' | 'api';
export const activeKind = (trigger: Execution['trigger']): ActiveKind => (trigger === 'webhook' ? 'webhook' : 'api');
const activePartition = (kind: ActiveKind, shard: number) => `RUN#ACTIVE#${kind}#${shard}`;
const LEASED = 'L#';
const DUE = 'D#';
const at = (ms: number) => String(ms).padStart(15, '0');
/**
 * How long after its message can first be received a run handed to it may go unclaimed before the
 * sweep sends the message again (with the same dispatch id: a duplicate is dropped by the claim):
 * `DISPATCH_GRACE_SECONDS`, 2 minutes by default.
 */
export const dispatchGraceMs = () => config().DISPATCH_GRACE_SECONDS * 1000;
/** SQS delays are at most 15 minutes: a run asleep for longer is carried by several messages. */
const MAX_DELAY_MS = 900_000;
type Placed = Pick<Execution, 'executionId' | 'lease' | 'dispatch' | 'wakeAt'>;
/** GSI2SK: where the run sits in its active partition, as it is written at `now`. */
export const activeSortKey = (e: Placed, now: number) => {
  if (e.lease) return `${LEASED}${at(e.lease.expiresAt)}#${e.executionId}`;
  if (e.dispatch === undefined) return `W#${e.executionId}`;
  const visible = Math.min(Math.max(now, e.wakeAt ?? now), now + MAX_DELAY_MS);
  return `${DUE}${at(visible + dispatchGraceMs())}#${e.executionId}`;
};
/** Both active-index attributes of an in-progress run, as it is written at `now`. */
export const activeIndex = (e: Placed & Pick<Execution, 'trigger'>, now: number) => ({
  GSI2PK: activePartition(activeKind(e.trigger), shardOf(e.executionId, ACTIVE_SHARDS)),
  GSI2SK: activeSortKey(e, now),
});
/**
 * Move a run handed to a message to a later due time (as if its message could first be received at
 * `visibleFrom`), only while it still waits, unclaimed, for `e.dispatch`: the sweep's next try.
 */
export async function postponeDue(e: Execution, visibleFrom: number): Promise<void> {
  await db().send(
    new UpdateCommand(
      buildUpdate(executionKey(e.accountId, e.executionId), { GSI2SK: activeSortKey(e, visibleFrom) }, [], {
        expression: 'dispatch = :d AND attribute_not_exists(#lease)',
        names: { '#lease': 'lease' },
        values: { ':d': e.dispatch },
      }),
    ),
  );
}

/** What a run that stops being in progress (finished, interrupted) removes. */
export const ACTIVE_INDEX_ATTRIBUTES = ['GSI2PK', 'GSI2SK'] as const;

/** What a sweep reads of a shard: every run, or the leases that expired / the dispatches overdue before `before`. */
export type ActiveRange = { part: 'all' } | { part: 'expired' | 'overdue'; before: number };

/**
 * One page of a shard of the active index. A run of the shape before (`executionMove`) is moved to
 * its key as it is read, so the sweeps act on runs in progress across the deploy as on any other.
 */
export async function listActive(kind: ActiveKind, shard: number, range: ActiveRange, limit: number, startKey?: Record<string, unknown>) {
  const prefix = range.part === 'expired' ? LEASED : DUE;
  const page = await queryPage(
    {
      IndexName: 'GSI2',
      KeyConditionExpression: range.part === 'all' ? 'GSI2PK = :pk' : 'GSI2PK = :pk AND GSI2SK BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': activePartition(kind, shard),
        ...(range.part === 'all' ? {} : { ':from': prefix, ':to': `${prefix}${at(range.before)}` }),
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
