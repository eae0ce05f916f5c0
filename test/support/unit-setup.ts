import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdServerLogs } from './logs.ts';
import { applyTestEnv, setLogLevel } from './test-env.ts';

/**
 * The unit project (vitest.config.ts): no emulator runs. The settings functions check at import are
 * set, their services at an address where nothing listens (port 9, discard), so a unit test that
 * reaches for DynamoDB, SQS or S3 fails at once (connection refused) instead of passing by luck: it
 * belongs in the emulated project.
 */
const NOWHERE = 'http://127.0.0.1:9';
// The local key files (the account secrets' keyring, reviewers' links), as the emulated run has them.
const keys = mkdtempSync(join(tmpdir(), 'flowgate-unit-keys-'));
applyTestEnv({
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'unit',
  AWS_SECRET_ACCESS_KEY: 'unit',
  AWS_ENDPOINT_URL_DYNAMODB: NOWHERE,
  AWS_ENDPOINT_URL_SQS: NOWHERE,
  AWS_ENDPOINT_URL_S3: NOWHERE,
  AWS_ENDPOINT_URL_SESV2: NOWHERE,
  S3_FORCE_PATH_STYLE: 'true',
  TABLE_NAME: 'flowgate-unit',
  RUNS_QUEUE_URL: `${NOWHERE}/000000000000/runs`,
  NOTIFY_QUEUE_URL: `${NOWHERE}/000000000000/notify`,
  ARTIFACTS_BUCKET: 'flowgate-unit',
  SECRETS_KEY_FILE: join(keys, 'secrets.key'),
  REVIEW_LINK_KEY_FILE: join(keys, 'review-links.key'),
});
setLogLevel();
// No server answers here, so no answer to check against the OpenAPI document (that check loads it: a second a file).
holdServerLogs();
