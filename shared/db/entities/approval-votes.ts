import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import type { Condition } from '../update.ts';
import { approvalKey } from './approval.ts';

// A quorum approval's votes (shared/domain/quorum.ts): each approving vote is one conditional
// UpdateItem on the approval, which counts it and records its voter; what ends the approval carries
// a condition on the count.

const QUORUM_NAMES = { '#qa': 'approvals', '#qm': 'minApprovals', '#qb': 'approvedBy' };

/** A rejection's extra condition: the quorum is still open and the rejecter has not approved. */
export const rejectCondition = (userId: string): Condition => ({
  expression: '(attribute_not_exists(#qa) OR #qa < #qm) AND NOT contains(#qb, :qme)',
  names: QUORUM_NAMES,
  values: { ':qme': userId },
});

/** The quorum's completion's extra condition: the approving votes reached the minimum. */
export const QUORUM_REACHED: Condition = { expression: '#qa >= #qm', names: { '#qa': 'approvals', '#qm': 'minApprovals' } };

/**
 * Count `userId`'s approving vote on the pending approval and keep `lastApproval` (the vote, as JSON)
 * as the last one: refused (a condition failure) when the approval is not PENDING, the user voted, or
 * the quorum is reached. The approval's attributes as the vote left them.
 */
export async function addApprovingVote(
  a: { accountId: string; approvalId: string },
  userId: string,
  lastApproval: string,
): Promise<Record<string, unknown> | undefined> {
  const { Attributes } = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: approvalKey(a.accountId, a.approvalId),
      UpdateExpression: 'SET #qa = if_not_exists(#qa, :zero) + :one, #qb = list_append(if_not_exists(#qb, :none), :me), #ql = :last',
      ConditionExpression: '#status = :pending AND NOT contains(#qb, :qme) AND (attribute_not_exists(#qa) OR #qa < #qm)',
      ExpressionAttributeNames: { ...QUORUM_NAMES, '#ql': 'lastApproval', '#status': 'status' },
      ExpressionAttributeValues: {
        ':zero': 0,
        ':one': 1,
        ':none': [],
        ':me': [userId],
        ':qme': userId,
        ':last': lastApproval,
        ':pending': 'PENDING',
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return Attributes;
}
