/**
 * `TEST_LOGS=1`: every log line of the service (the logger, the local server's and pollers' messages,
 * a child `npm start`'s output) is printed as it comes. Otherwise each is held with the test it came
 * during and printed only if that test (or its file's hooks) fails: vitest's `silent: 'passed-only'`
 * (vitest.config.ts) holds them, test/support/logs.ts routes the logger's lines through it.
 */
export const testLogs = (value = process.env.TEST_LOGS) => value !== undefined && value !== '' && value !== '0';
