import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../infra/local/emulators.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    emulatorEnv: Record<string, string>;
  }
}

/** One set of real emulators (DynamoDB Local, local SQS, s3rver) for the whole test run. */
export default async function setup(project: TestProject) {
  const emulators = await startEmulators();
  project.provide('emulatorEnv', emulators.env);
  return () => emulators.stop();
}
