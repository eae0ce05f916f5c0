import type { Pluggable } from '@smithy/types';

/**
 * Middleware every AWS SDK client of this process gets (`withPlugins`). None on AWS; the local stack
 * adds its IAM enforcement and fault injection here (infra/local/iam.ts) before any client is built.
 * A module of its own, without imports: every function's bundle has it, whatever clients it uses.
 */
const plugins: Pluggable<any, any>[] = [];

export const addSdkPlugin = (p: Pluggable<any, any>) => {
  if (!plugins.includes(p)) plugins.push(p);
};

/** `client` with this process's SDK plugins. */
export function withPlugins<C extends { middlewareStack: { use: (p: Pluggable<any, any>) => void } }>(client: C): C {
  for (const p of plugins) client.middlewareStack.use(p);
  return client;
}
