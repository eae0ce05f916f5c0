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

type Keeper = () => <R>(work: () => R) => R;
let keeper: Keeper = () => (work) => work();

/**
 * Work done later on behalf of a function (a flush of the counts it made, shared/db/counters.ts) is
 * done as that function: `keepIdentity()` where the work is asked for returns how to run it. On AWS an
 * instance is one function, so it runs the work as it is; locally, where every function shares one
 * process, the local stack sets the keeper to its IAM identity (infra/local/iam.ts `keepInvocation`).
 */
export const keepIdentity = () => keeper();
/** Set the keeper; returns the one it replaces (a wrapper, such as the heat bench's, keeps it). */
export const setIdentityKeeper = (k: Keeper): Keeper => {
  const was = keeper;
  keeper = k;
  return was;
};
