import { inject } from 'vitest';
import { resetConfig } from '../../shared/config.ts';

// Every test file talks to the run's emulators through the production SDK clients, with the settings
// every function checks at import (the local stack sets the same ones; PUBLIC_BASE_URL there is its own URL).
Object.assign(process.env, inject('emulatorEnv'), {
  PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? 'http://flowgate.test',
  POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'SILENT',
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
});
resetConfig();
