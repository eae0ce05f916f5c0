import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../infra/local/emulators.ts';
import { parseFaults } from '../../infra/local/fault-kinds.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorEnv: Record<string, string>;
  }
}

/**
 * One set of real emulators (DynamoDB Local, local SQS, s3rver) for the whole test run. The shared
 * table has no stream: no test reads it (test/integration/audit-stream.test.ts reads tables of its own),
 * and DynamoDB Local spends about a third more CPU on every write it records in one.
 */
export default async function setup(project: TestProject) {
  // A malformed FAULTS stops the run before anything starts, with what is wrong (docs/local-mode.md).
  parseFaults(process.env.FAULTS);
  const emulators = await startEmulators({ stream: false });
  project.provide('emulatorEnv', emulators.env);
  return () => emulators.stop();
}
