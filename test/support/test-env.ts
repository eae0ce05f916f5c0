import { resetConfig } from '../../shared/config.ts';
import { logger } from '../../shared/logger.ts';

/**
 * The settings every test file runs with, on top of `services` (the run's emulators, or for unit tests
 * addresses where nothing listens: test/support/unit-setup.ts). The local stack sets the same ones;
 * PUBLIC_BASE_URL there is its own URL.
 */
export function applyTestEnv(services: Record<string, string>): void {
  Object.assign(process.env, services, {
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
}

/** The logger was made when the imports loaded, before its level was set. */
export const setLogLevel = () => logger.setLogLevel(process.env.POWERTOOLS_LOG_LEVEL as Parameters<typeof logger.setLogLevel>[0]);
