import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../infra/local/emulators.ts';
import { parseFaults } from '../../infra/local/fault-kinds.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorEnv: Record<string, string>;
  }
}

/** One set of real emulators (DynamoDB Local, local SQS, s3rver) for the whole test run. */
export default async function setup(project: TestProject) {
  // A malformed FAULTS stops the run before anything starts, with what is wrong (docs/local-mode.md).
  parseFaults(process.env.FAULTS);
  const emulators = await startEmulators();
  project.provide('emulatorEnv', emulators.env);
  return () => emulators.stop();
}
