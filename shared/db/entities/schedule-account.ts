import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { queryAll } from '../query.ts';
import type { TransactItem } from '../transact.ts';
import { enabledCountUpdate, Schedule, scheduleCountKey, scheduleItem } from './schedule.ts';

// The account's schedules and its enabled count, as the console's list reads them (PK ACC#<account>,
// SK SCH#<id>: the schedule items; SK SCHEDULES: the count). Keys are ./schedule.ts's.

/** Transaction items of a new schedule: its item (new), and an enabled one counted on its account (refused at `limit`). */
export const newScheduleItems = (s: Schedule, limit: number | undefined): TransactItem[] => [
  { Put: { TableName: tableName(), Item: scheduleItem(s), ConditionExpression: 'attribute_not_exists(PK)' } },
  ...(s.enabled ? [enabledCountUpdate(s.accountId, 1, limit)] : []),
];

/** Every schedule of an account (the console's list; at most the plan's limit of enabled ones, and the disabled). */
export const listAccountScheduleItems = (accountId: string) =>
  queryAll(
    {
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
      ExpressionAttributeValues: { ':pk': `ACC#${accountId}`, ':sk': 'SCH#' },
    },
    (i) => Schedule.parse(i),
  );

/** The account's count of enabled schedules (what the plan's limit counts). */
export async function enabledScheduleCount(accountId: string): Promise<number> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: scheduleCountKey(accountId) }));
  return typeof Item?.enabled === 'number' ? Item.enabled : 0;
}
