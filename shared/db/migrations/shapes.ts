import type { Item, Move } from './move.ts';

// Old key shapes that reads still meet (an approval decided, a callback reported, a run changed before
// the migration reached them: they move the item first, ./move.ts `readMoving`, `moveItem`), and how
// an item of each moves. The entity modules wire in their current keys (they import this module, not
// the other way round); `npm run admin -- migrate` applies the same moves (./index.ts).

type Keys = { PK: string; SK: string };

/** Where an approval was kept before the upgrade. */
export const oldApprovalKey = (accountId: string, approvalId: string) => ({ PK: `ACC#${accountId}`, SK: `AP#${approvalId}` });

/** Approvals were kept under their account's partition before: moved to their own, with their listing and deadline in shards. */
export const approvalMoveTo = (keys: {
  approvalKey: (accountId: string, approvalId: string) => Keys;
  approvalIndex: (accountId: string, status: never, approvalId: string) => Item;
  expiryIndex: (a: { accountId: string; approvalId: string; expiresAt: number }) => Item;
}): Move => ({
  name: 'approvals',
  matches: (item) => item.type === 'approval' && String(item.PK).startsWith('ACC#') && String(item.SK).startsWith('AP#'),
  moved: (item) => {
    const { GSI2PK, GSI2SK: _, ...rest } = item;
    const a = { accountId: String(item.accountId), approvalId: String(item.approvalId) };
    return {
      ...rest,
      ...keys.approvalKey(a.accountId, a.approvalId),
      ...keys.approvalIndex(a.accountId, item.status as never, a.approvalId),
      // Pending with a deadline: in the expiry index, now in its shard.
      ...(GSI2PK && item.status === 'PENDING' ? keys.expiryIndex({ ...a, expiresAt: Number(item.expiresAt) }) : {}),
    };
  },
});

/** Where a callback was kept before the upgrade. */
export const oldCallbackKey = (accountId: string, callbackId: string) => ({ PK: `ACC#${accountId}`, SK: `CB#${callbackId}` });

/** Callbacks were kept under their account's partition before: moved to their own, a pending one's deadline in its shard. */
export const callbackMoveTo = (keys: {
  callbackKey: (accountId: string, callbackId: string) => Keys;
  deadlinePartition: (callbackId: string) => string;
}): Move => ({
  name: 'callbacks',
  matches: (item) => item.type === 'callback' && String(item.PK).startsWith('ACC#') && String(item.SK).startsWith('CB#'),
  moved: (item) => {
    const { GSI2PK, GSI2SK, ...rest } = item;
    const c = { accountId: String(item.accountId), callbackId: String(item.callbackId) };
    return {
      ...rest,
      ...keys.callbackKey(c.accountId, c.callbackId),
      ...(GSI2PK ? { GSI2PK: keys.deadlinePartition(c.callbackId), GSI2SK } : {}),
    };
  },
});

/**
 * Where a run was kept before the upgrade: under its account's partition (`ACC#<account>` / `EX#<id>`,
 * listed by workflow on GSI1 `ACC#<account>#WF#<workflow>`, its ids repeated on the item).
 */
export const oldExecutionKey = (accountId: string, executionId: string) => ({ PK: `ACC#${accountId}`, SK: `EX#${executionId}` });

/** Runs move to their own keys and listings; the ids their key holds leave the item. */
export const executionMoveTo = (keys: {
  executionKey: (accountId: string, executionId: string) => Keys;
  executionListings: (ids: { accountId: string; workflowId: string; executionId: string }) => Item;
}): Move => ({
  name: 'executions',
  matches: (item) => item.type === 'execution' && String(item.PK).startsWith('ACC#') && String(item.SK).startsWith('EX#'),
  moved: (item) => {
    const { accountId: _a, executionId: _e, ...rest } = item;
    const ids = { accountId: String(item.accountId), workflowId: String(item.workflowId), executionId: String(item.executionId) };
    return { ...rest, ...keys.executionKey(ids.accountId, ids.executionId), ...keys.executionListings(ids) };
  },
});
