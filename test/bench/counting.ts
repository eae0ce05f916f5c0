import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { MiddlewareStack } from '@smithy/types';
import { db, queue, storage } from '../../shared/clients.ts';

/** One AWS SDK call as the client saw it: from `send` to its result (retries included). */
export type Call = { service: 'dynamodb' | 'sqs' | 's3'; command: string; start: number; end: number };

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
        const call: Call = { service, command: String(context.commandName).replace(/Command$/, ''), start: performance.now(), end: 0 };
        try {
          return await next(args);
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
