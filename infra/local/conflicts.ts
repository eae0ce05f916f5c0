import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import type { Pluggable } from '@smithy/types';
import { TABLE } from '../../shared/db/table.ts';

/**
 * DynamoDB's transaction conflicts, which DynamoDB Local never raises (it runs one transaction at a
 * time). On AWS (the developer guide's "Transaction conflict handling"):
 * - a PutItem, UpdateItem or DeleteItem of an item an ongoing TransactWriteItems includes fails with
 *   `TransactionConflictException`;
 * - a TransactWriteItems with an item that is part of another ongoing transaction, and a
 *   TransactGetItems with an item an ongoing TransactWriteItems, BatchWriteItem, PutItem, UpdateItem
 *   or DeleteItem writes, are cancelled: `TransactionCanceledException`, reason `TransactionConflict`.
 * Here every call of this process's DynamoDB clients holds its items from its send until its answer,
 * but no longer than LOCK_MS, 10 ms (DynamoDB Local runs one transaction at a time, so a call's answer can
 * wait behind many others; on AWS they run side by side and an item is held for the few milliseconds
 * its transaction takes). A call that meets an item held by another is refused the same way, before
 * it reaches the emulator, so it changes nothing. Reads (GetItem, Query, BatchGetItem) never conflict: they read what is committed.
 * Always on, locally and in every test, as on AWS: two requests at once may meet.
 */

type Kind = 'write' | 'transactWrite' | 'transactGet';
type Call = { kind: Kind };
/** Whether a new call of kind `mine` meets a call in flight of kind `other` on one item. */
const meets = (mine: Kind, other: Kind) =>
  mine === 'write' ? other === 'transactWrite' : mine === 'transactWrite' ? other !== 'write' : other !== 'transactGet';
/** The items of the calls in flight: `<table>\0<PK>\0<SK>` → the calls on it. */
const inFlight = new Map<string, Set<Call>>();

/** The longest a call holds its items: about what a transaction of a few items takes on AWS. */
export const LOCK_MS = 10;

type Attr = unknown;
const str = (v: Attr): string =>
  typeof v === 'string' || typeof v === 'number'
    ? String(v)
    : v && typeof v === 'object'
      ? String((v as { S?: string; N?: string }).S ?? (v as { N?: string }).N ?? JSON.stringify(v))
      : String(v);
const itemId = (table: string, key: Record<string, Attr> | undefined) =>
  `${table}\0${str(key?.[TABLE.partitionKey])}\0${str(key?.[TABLE.sortKey])}`;

/** The items a call writes (or, a TransactGetItems, reads in a transaction), and its kind. */
function itemsOf(command: string, input: Record<string, any>): { items: string[]; kind: Kind } | undefined {
  switch (command) {
    case 'PutItemCommand':
      return { items: [itemId(input.TableName, input.Item)], kind: 'write' };
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return { items: [itemId(input.TableName, input.Key)], kind: 'write' };
    case 'BatchWriteItemCommand':
      return {
        items: Object.entries(input.RequestItems ?? {}).flatMap(([table, requests]: [string, any]) =>
          requests.map((r: any) => itemId(table, r.PutRequest?.Item ?? r.DeleteRequest?.Key)),
        ),
        kind: 'write',
      };
    case 'TransactWriteItemsCommand':
      return {
        items: (input.TransactItems ?? []).map((t: any) => {
          const op = t.Put ?? t.Update ?? t.Delete ?? t.ConditionCheck;
          return itemId(op.TableName, op.Key ?? op.Item);
        }),
        kind: 'transactWrite',
      };
    case 'TransactGetItemsCommand':
      return { items: (input.TransactItems ?? []).map((t: any) => itemId(t.Get.TableName, t.Get.Key)), kind: 'transactGet' };
    default:
      return undefined;
  }
}

const metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };

/** AWS's cancellation of a transaction that met another on `conflicting` (indexes into its items). */
function cancelled(count: number, conflicting: Set<number>) {
  const reasons = Array.from({ length: count }, (_, i) =>
    conflicting.has(i) ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' },
  );
  return Object.assign(
    new DynamoDBServiceException({
      name: 'TransactionCanceledException',
      $fault: 'client',
      $metadata: metadata,
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
    }),
    { CancellationReasons: reasons },
  );
}

/** AWS's refusal of a plain write to an item a transaction is writing. */
const conflictException = () =>
  new DynamoDBServiceException({
    name: 'TransactionConflictException',
    $fault: 'client',
    $metadata: metadata,
    message: 'Transaction is ongoing for the item',
  });

/** The SDK plugin (DynamoDB clients only: the other clients' calls pass through). */
export const conflictsPlugin: Pluggable<any, any> = {
  applyToStack: (stack) => {
    stack.add(
      (next, context) => async (args) => {
        const found = context.clientName === 'DynamoDBClient' ? itemsOf(String(context.commandName), args.input as any) : undefined;
        if (!found) return next(args);
        const { items, kind } = found;
        const meeting = new Set<number>();
        items.forEach((item, i) => {
          for (const other of inFlight.get(item) ?? []) if (meets(kind, other.kind)) meeting.add(i);
        });
        if (meeting.size > 0) {
          throw kind === 'write' ? conflictException() : cancelled(items.length, meeting);
        }
        const call: Call = { kind };
        for (const item of items) inFlight.set(item, (inFlight.get(item) ?? new Set()).add(call));
        const release = () => {
          for (const item of items) {
            const calls = inFlight.get(item);
            calls?.delete(call);
            if (calls?.size === 0) inFlight.delete(item);
          }
        };
        const held = setTimeout(release, LOCK_MS);
        held.unref();
        try {
          return await next(args);
        } finally {
          clearTimeout(held);
          release();
        }
      },
      // After the document client's marshalling and before the retries: each try is a call of its own.
      { step: 'initialize', name: 'localTransactionConflicts', priority: 'low', override: true },
    );
  },
};
