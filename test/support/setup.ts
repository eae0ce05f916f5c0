import { inject } from 'vitest';
import { resetConfig } from '../../shared/config.ts';

// Every test file talks to the run's emulators through the production SDK clients.
Object.assign(process.env, inject('emulatorEnv'), {
  POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT',
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
});
resetConfig();
