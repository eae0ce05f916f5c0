import { inject } from 'vitest';
import { iamPlugin, keepInvocation } from '../../infra/local/iam.ts';
import { conflictsPlugin } from '../../infra/local/conflicts.ts';
import { configureFaults, faultsPlugin, parseFaults } from '../../infra/local/faults.ts';
import { addSdkPlugin, setIdentityKeeper } from '../../shared/sdk-plugins.ts';
import { checkFetchedResponses } from './contract.ts';
import { holdServerLogs } from './logs.ts';
import { applyTestEnv, setLogLevel } from './test-env.ts';

// Every test file of the emulated project talks to the run's emulators through the production SDK
// clients, with the settings every function checks at import (./test-env.ts).
applyTestEnv(inject('emulatorEnv'));
// IAM as on AWS: a handler's AWS calls are checked against its function's grants (infra/local/iam.ts),
// here as in the local stack; a test's own setup calls are no function's and are not checked.
addSdkPlugin(iamPlugin);
// Concurrent writes to one item conflict as on DynamoDB (infra/local/conflicts.ts), which DynamoDB Local never does.
addSdkPlugin(conflictsPlugin);
setIdentityKeeper(keepInvocation);
// `FAULTS=… npm test`: the functions' work in every test under faults as AWS raises them (docs/local-mode.md).
configureFaults(parseFaults(process.env.FAULTS));
addSdkPlugin(faultsPlugin);
setLogLevel();
holdServerLogs();
// Every answer of a local server is checked against the OpenAPI document (test/support/contract.ts).
checkFetchedResponses();
