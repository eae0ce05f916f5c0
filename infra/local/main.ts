// `npm start`: the local stack in the foreground (API.md "Local mode and operator CLI").
import { resolve } from 'node:path';
import * as z from 'zod';
import { demoBanner, demoSchedules } from './seed.ts';
import { startLocalStack } from './stack.ts';

const env = z
  .object({
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    DATA_DIR: z.string().default('.data'),
    SEED_DEMO: z.stringbool().default(true),
    LOCAL_SWEEP_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  })
  .parse(process.env);

// Quiet JSON access logs unless asked for; errors still print.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
// Metrics are EMF lines for CloudWatch; locally they are noise unless asked for.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const stack = await startLocalStack({
  host: env.HOST,
  port: env.PORT,
  dataDir: resolve(env.DATA_DIR),
  seed: env.SEED_DEMO,
  sweepSeconds: env.LOCAL_SWEEP_SECONDS,
});
console.log(stack.demo ? demoBanner(stack.demo, await demoSchedules(stack.demo)) : `Flowgate local stack ready at ${stack.url}`);
// Approval mail (email channels) goes to the SES emulator: read it there.
if (stack.mailViewer) console.log(`Mail sent by the stack (SES emulator): ${stack.mailViewer}\n`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the local stack...`);
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
