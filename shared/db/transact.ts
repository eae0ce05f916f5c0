import {
  DeleteCommand,
  type DeleteCommandInput,
  PutCommand,
  type PutCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../clients.ts';

/** One item of a TransactWriteItems. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
/** A single write, as a transaction would hold it. */
export type SingleWrite = { Put: PutCommandInput } | { Update: UpdateCommandInput } | { Delete: DeleteCommandInput };

/**
 * Write one item (a Put, Update or Delete with its condition); with `extra` (an audit entry, shared/domain/audit.ts)
 * in one transaction with them, so neither lands without the other. A refused condition throws
 * either way (`isConditionFailure` knows both shapes). Only the first item may ask for ReturnValues,
 * and only when there is no `extra` (a transaction returns none).
 */
export async function writeWith(item: SingleWrite, extra: readonly TransactItem[] = []): Promise<void> {
  if (extra.length === 0) {
    if ('Put' in item) await db().send(new PutCommand(item.Put));
    else if ('Update' in item) await db().send(new UpdateCommand(item.Update));
    else await db().send(new DeleteCommand(item.Delete));
    return;
  }
  await db().send(new TransactWriteCommand({ TransactItems: [item as TransactItem, ...extra] }));
}

/**
 * Write `items` (each made by an entity module: a put, a conditional update, an audit entry) in one
 * transaction: all of them or none. A refused condition throws (`isConditionFailure`; the cancellation
 * reasons say which item).
 */
export async function writeAll(items: readonly TransactItem[]): Promise<void> {
  await db().send(new TransactWriteCommand({ TransactItems: [...items] }));
}

/** A new item as a transaction's Put (fresh ids: no condition). */
export const putItem = (Item: Record<string, unknown>): TransactItem => ({ Put: { TableName: tableName(), Item } });
