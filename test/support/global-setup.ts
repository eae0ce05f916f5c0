import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../infra/local/emulators.ts';
import { parseFaults } from '../../infra/local/fault-kinds.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorEnv: Record<string, string>;
  }
}

type Shared = { emulators: ReturnType<typeof startEmulators>; users: number };
const shared = globalThis as { flowgateEmulators?: Shared };

/**
 * One set of real emulators (DynamoDB Local, local SQS, s3rver) for the whole test run: both emulated
 * projects (vitest.config.ts) take the same set, which the last of them to finish stops.
 */
export default async function setup(project: TestProject) {
  // A malformed FAULTS stops the run before anything starts, with what is wrong (docs/local-mode.md).
  parseFaults(process.env.FAULTS);
  shared.flowgateEmulators ??= { emulators: startEmulators(), users: 0 };
  const mine = shared.flowgateEmulators;
  mine.users++;
  project.provide('emulatorEnv', (await mine.emulators).env);
  return async () => {
    if (--mine.users > 0) return;
    shared.flowgateEmulators = undefined;
    await (await mine.emulators).stop();
  };
}
