import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { MiddlewareStack } from '@smithy/types';
import { db, queue, storage } from '../../shared/clients.ts';
import { readItems, touchedKeys, writeUnits } from './write-units.ts';

/**
 * One AWS SDK call as the client saw it: from `send` to its result (retries included). `wcu`: the
 * write units a DynamoDB write costs on AWS, table and indexes, computed from the items before and
 * after it by AWS's sizing rules (`./write-units.ts`).
 */
export type Call = { service: 'dynamodb' | 'sqs' | 's3'; command: string; start: number; end: number; wcu: number };

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'BatchWriteItem']);

const recorder = new AsyncLocalStorage<Call[]>();
const instrumented = new WeakSet<object>();

/**
 * Count the shared clients' calls with SDK middleware, attributed through AsyncLocalStorage to the
 * `recordCalls` that started them (so pollers or other work in the process are never counted).
 */
export async function instrumentClients(): Promise<void> {
  const clients = [
    ['dynamodb', db()],
    ['sqs', queue()],
    ['s3', await storage()],
  ] as const;
  for (const [service, client] of clients) {
    if (instrumented.has(client.middlewareStack)) continue;
    instrumented.add(client.middlewareStack);
    const stack = client.middlewareStack as MiddlewareStack<object, object>;
    stack.add(
      (next, context) => async (args) => {
        const calls = recorder.getStore();
        const call: Call = {
          service,
          command: String(context.commandName).replace(/Command$/, ''),
          start: performance.now(),
          end: 0,
          wcu: 0,
        };
        const touched =
          calls && service === 'dynamodb' && WRITES.has(call.command)
            ? touchedKeys(call.command, (args as { input: Record<string, never> }).input)
            : undefined;
        const before = touched && (await readItems(touched.keys));
        try {
          const result = await next(args);
          if (touched && before) {
            const after = await readItems(touched.keys);
            call.wcu = before.reduce((n: number, b, i) => n + writeUnits(b, after[i], touched.transactional), 0);
          }
          return result;
        } finally {
          call.end = performance.now();
          calls?.push(call);
        }
      },
      { step: 'initialize', name: 'benchCountCalls' },
    );
  }
}

/** Run `fn` and return what it returned with the SDK calls it made, in order of their start. */
export async function recordCalls<T>(fn: () => Promise<T>): Promise<{ result: T; calls: Call[] }> {
  const calls: Call[] = [];
  const result = await recorder.run(calls, fn);
  return { result, calls: calls.sort((a, b) => a.start - b.start) };
}

/** Run `fn` with its SDK calls not counted by an enclosing `recordCalls` (the bench's own reads and polls). */
export const uncounted = <T>(fn: () => Promise<T>): Promise<T> => recorder.exit(fn);

/**
 * Sequential I/O steps: groups of calls that overlap in time (calls sent together with Promise.all),
 * one after the other. Two calls where one starts after the other ended are two steps.
 */
export function sequentialSteps(calls: readonly Call[]): Call[][] {
  const steps: Call[][] = [];
  let end = Number.NEGATIVE_INFINITY;
  for (const c of [...calls].sort((a, b) => a.start - b.start)) {
    if (c.start < end) steps.at(-1)?.push(c);
    else steps.push([c]);
    end = Math.max(end, c.end);
  }
  return steps;
}

/** `BatchGetItem → UpdateItem‖UpdateItem → TransactWriteItems → SendMessage` */
export const describeSteps = (steps: readonly Call[][]) => steps.map((s) => s.map((c) => c.command).join('‖')).join(' → ');
