import { inject } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { iamPlugin, keepInvocation } from '../../infra/local/iam.ts';
import { conflictsPlugin } from '../../infra/local/conflicts.ts';
import { configureFaults, faultsPlugin, parseFaults } from '../../infra/local/faults.ts';
import { addSdkPlugin, setIdentityKeeper } from '../../shared/sdk-plugins.ts';
import { logger } from '../../shared/logger.ts';
import { checkFetchedResponses } from './contract.ts';
import { holdServerLogs } from './logs.ts';

// Every test file talks to the run's emulators through the production SDK clients, with the settings
// every function checks at import (the local stack sets the same ones; PUBLIC_BASE_URL there is its own URL).
Object.assign(process.env, inject('emulatorEnv'), {
  PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? 'http://flowgate.test',
  // Logged, and held with the test they came during (printed if it fails, always with TEST_LOGS=1:
  // test/support/logs.ts); a child `npm start` inherits it.
  POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'INFO',
  POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
  // Password hashing at the production cost (2^17) would double the suite's time; the cost itself is
  // tested in test/unit/passwords-cache.test.ts.
  PASSWORD_SCRYPT_N: String(2 ** 14),
  // Every in-process test event comes from the same address; the failure budget is tested on its own
  // (test/integration/auth-failures.test.ts).
  AUTH_FAILURE_LIMIT: process.env.AUTH_FAILURE_LIMIT ?? '1000000',
  // The API's reads of the audit log show an entry as soon as it is stored; the settle window that
  // readers following the log need is tested on its own (test/integration/audit-follow.test.ts).
  AUDIT_SETTLE_SECONDS: process.env.AUDIT_SETTLE_SECONDS ?? '0',
});
resetConfig();
// IAM as on AWS: a handler's AWS calls are checked against its function's grants (infra/local/iam.ts),
// here as in the local stack; a test's own setup calls are no function's and are not checked.
addSdkPlugin(iamPlugin);
// Concurrent writes to one item conflict as on DynamoDB (infra/local/conflicts.ts), which DynamoDB Local never does.
addSdkPlugin(conflictsPlugin);
setIdentityKeeper(keepInvocation);
// `FAULTS=… npm test`: the functions' work in every test under faults as AWS raises them (docs/local-mode.md).
configureFaults(parseFaults(process.env.FAULTS));
addSdkPlugin(faultsPlugin);
// The logger was made when the imports above loaded, before its level was set here.
logger.setLogLevel(process.env.POWERTOOLS_LOG_LEVEL as Parameters<typeof logger.setLogLevel>[0]);
holdServerLogs();
// Every answer of a local server is checked against the OpenAPI document (test/support/contract.ts).
checkFetchedResponses();
