// `npm start`: the local stack in the foreground (docs/local-mode.md).
import { resolve } from 'node:path';
import * as z from 'zod';
import { FaultsSetting, faultsProblem } from './fault-kinds.ts';

const parsed = z
  .object({
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    DATA_DIR: z.string().default('.data'),
    SEED_DEMO: z.stringbool().default(true),
    LOCAL_SWEEP_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
    // The wait before the first retry of a failed schedule fire or sweep (the second: twice it); AWS: 60.
    LOCAL_ASYNC_RETRY_SECONDS: z.coerce.number().min(0).max(3600).optional(),
    // Faults as AWS raises them, kind:probability,… (docs/local-mode.md); checked here, injected by infra/local/faults.ts.
    FAULTS: z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), FaultsSetting.optional()),
  })
  .safeParse(process.env);
// A setting the stack cannot use stops it before anything starts, with what is wrong.
if (!parsed.success) {
  const names = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];
  for (const name of names) {
    const issues = parsed.error.issues.filter((i) => String(i.path[0]) === name);
    const problem = name === 'FAULTS' ? faultsProblem(new z.ZodError(issues)) : issues.map((i) => i.message).join('; ');
    console.error(`npm start: ${name}=${process.env[name]} is not valid: ${problem}`);
  }
  process.exit(1);
}
const env = parsed.data;

// Read when the service's modules load, so set before they are imported (below): a short text line
// per request, warnings and errors in full (`LOG_FORMAT=json` for Powertools' JSON lines, as on AWS).
process.env.LOG_FORMAT ??= 'text';
// Metrics are EMF lines for CloudWatch; locally they are noise unless asked for.
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
const { demoBanner, demoSchedules } = await import('./seed.ts');
const { startLocalStack } = await import('./stack.ts');

const stack = await startLocalStack({
  host: env.HOST,
  port: env.PORT,
  dataDir: resolve(env.DATA_DIR),
  seed: env.SEED_DEMO,
  sweepSeconds: env.LOCAL_SWEEP_SECONDS,
  faults: env.FAULTS,
});
console.log(stack.demo ? demoBanner(stack.demo, await demoSchedules(stack.demo)) : `Flowgate local stack ready at ${stack.url}`);
// Approval mail (email channels) goes to the SES emulator: read it there.
if (stack.mailViewer) console.log(`Mail sent by the stack (SES emulator): ${stack.mailViewer}\n`);
// Audit entries go onto EventBridge from the table's stream, as on AWS: here onto a local default bus.
if (stack.eventBus) console.log(`Audit entries put on EventBridge (local default bus): ${stack.eventBus}\n`);

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
