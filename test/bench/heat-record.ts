import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { MiddlewareStack } from '@smithy/types';
import { db } from '../../shared/clients.ts';
import { setIdentityKeeper } from '../../shared/sdk-plugins.ts';
import { type ReadPart, type Reread, readParts } from './read-units.ts';
import { readItems, touchedKeys, writeParts } from './write-units.ts';

/**
 * What the heat model counts: every DynamoDB read and write of the recorded work, one access per place
 * it lands (a table item, an index entry, or for a query a partition's range), with its units by AWS's
 * sizing rules (`./write-units.ts`, `./read-units.ts`). `pk` and `sk` are the values as written or read.
 */
export type Access = {
  op: 'read' | 'write';
  command: string;
  index: string;
  pk: string;
  sk?: string;
  units: number;
  /** Made by a flush of an instance's counts (shared/db/counters.ts), not by the work itself. */
  flush?: true;
};

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);
const recorder = new AsyncLocalStorage<Access[]>();
/** Set while a flush of the counts writes (the identity keeper's wrap of it: shared/sdk-plugins.ts). */
const flushing = new AsyncLocalStorage<true>();
const NAME = 'benchHeat';
const mark = () => (flushing.getStore() ? { flush: true as const } : {});

let own: DynamoDBDocumentClient | undefined;
/** A client of its own (never recorded): whole items by key, and queries without their filter or projection. */
const reread: Reread = {
  item: async (Key) => {
    own ??= DynamoDBDocumentClient.from(new DynamoDBClient({}));
    return (await own.send(new GetCommand({ TableName: process.env.TABLE_NAME, Key, ConsistentRead: true }))).Item;
  },
  query: async (input) => {
    own ??= DynamoDBDocumentClient.from(new DynamoDBClient({}));
    const { FilterExpression, ProjectionExpression, Select, ...rest } = input;
    const names = { ...(rest.ExpressionAttributeNames ?? {}) };
    // Names and values only the filter or projection used would be refused as unused.
    for (const k of Object.keys(names)) if (!String(rest.KeyConditionExpression).includes(k)) delete names[k];
    const values = { ...(rest.ExpressionAttributeValues ?? {}) };
    for (const k of Object.keys(values)) if (!String(rest.KeyConditionExpression).includes(k)) delete values[k];
    const res = await own.send(
      new QueryCommand({
        ...(rest as QueryCommandInput),
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
    return res.Items ?? [];
  },
};

/**
 * Record the shared DynamoDB client's calls made inside `recordHeat`, attributed through
 * AsyncLocalStorage (pollers or other work in the process are never counted). A write's items are
 * read (by a client of its own) before and after it, to size it; a refused write (its condition)
 * costs what its item's size does, as on AWS.
 */
export function instrumentHeat(): void {
  const stack = db().middlewareStack as MiddlewareStack<object, object>;
  if (stack.identify().some((m) => m.startsWith(NAME))) return;
  // A flush runs its writes through the keeper asked for when the count was made: marked, inside the
  // keeper already set (the local stack's identity).
  const kept = setIdentityKeeper(() => {
    const inner = kept();
    return (work) => inner(() => flushing.run(true, work));
  });
  stack.add(
    (next, context) => async (args) => {
      const out = recorder.getStore();
      if (!out) return next(args);
      const command = String(context.commandName).replace(/Command$/, '');
      const input = (args as { input: Record<string, any> }).input;
      if (!WRITES.has(command)) {
        const result = await next(args);
        const parts = await readParts(command, input, (result as { output: Record<string, any> }).output, reread);
        out.push(...parts.map((p: ReadPart) => ({ op: 'read' as const, command, ...p, ...mark() })));
        return result;
      }
      const touched = touchedKeys(command, input);
      const before = await readItems(touched.keys);
      const record = (after: typeof before) =>
        touched.keys.forEach((key, i) => {
          for (const p of writeParts(before[i], after[i], touched.transactional, key)) out.push({ op: 'write', command, ...p, ...mark() });
        });
      try {
        const result = await next(args);
        record(await readItems(touched.keys));
        return result;
      } catch (e) {
        record(before);
        throw e;
      }
    },
    { step: 'initialize', name: NAME },
  );
}

/** Run `fn` and return what it returned with the DynamoDB accesses it made. */
export async function recordHeat<T>(fn: () => Promise<T>): Promise<{ result: T; accesses: Access[] }> {
  const accesses: Access[] = [];
  const result = await recorder.run(accesses, fn);
  return { result, accesses };
}

/**
 * Run `fn` with its accesses recorded in the current recording, if any, except those of the counts'
 * flushes it makes, which are returned (`recording`: whether there was one).
 */
export async function recordFlushesApart<T>(fn: () => Promise<T>): Promise<{ result: T; flushed: Access[]; recording: boolean }> {
  const outer = recorder.getStore();
  const { result, accesses } = await recordHeat(fn);
  outer?.push(...accesses.filter((a) => !a.flush));
  return { result, flushed: accesses.filter((a) => a.flush), recording: outer !== undefined };
}

/** Run `fn` outside any recording (reads that only check progress). */
export const unrecorded = <T>(fn: () => Promise<T>): Promise<T> => recorder.exit(fn);
