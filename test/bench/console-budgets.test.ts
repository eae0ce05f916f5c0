import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as loginPage } from '../../functions/http/console/login-page.ts';
import { BODIES } from '../../shared/console/asset-bodies.generated.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { bundle, KIB } from './bundles.ts';
import { describeSteps, instrumentClients, recordCalls, sequentialSteps } from './counting.ts';

/**
 * The console's budgets (docs/performance.md "The console"): each page is a Lambda of its own whose
 * bundle stays within the trigger's budget, a first load (the page and every asset, compressed) within
 * 60 KiB, and a bounded number of DynamoDB calls per page view, counted on the emulators. Counts and
 * bytes only, never times.
 */

const TRIGGER_BUDGET_KIB = 607;
const FIRST_LOAD_KIB = 60;

type Result = { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
const view = async (handler: (e: never, c: never) => Promise<unknown>, path: string, cookie?: string) => {
  const event = apiEvent({ path, headers: { 'accept-encoding': 'gzip, deflate, br' } });
  if (cookie) event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const bytesOf = (r: Result) => Buffer.byteLength(r.body ?? '', r.isBase64Encoded ? 'base64' : 'utf8');
const assetsGzipped = Object.values(BODIES).reduce((n, a) => n + gzipSync(a.body, { level: 9 }).length, 0);

let session: string;
beforeAll(async () => {
  await instrumentClients();
  const account = await givenAccount();
  session = await sessionOf(account.admin.email);
}, 60_000);

describe('console page views', () => {
  it.each([
    // page, handler, DynamoDB calls at most, sequential steps at most
    ['/console/login', loginPage, 0, 0],
    // the session, then its user and account together, then the first page of runs (keys on the listing's shards, then one BatchGet)
    ['/console', overview, 8, 4],
  ] as const)(
    '%s: at most %i DynamoDB calls in %i sequential steps; the first load within 60 KiB compressed',
    async (path, handler, calls, steps) => {
      const { result, calls: made } = await recordCalls(() => view(handler, path, session));
      expect(result.statusCode, result.body).toBe(200);
      const dynamo = made.filter((c) => c.service === 'dynamodb');
      const order = describeSteps(sequentialSteps(dynamo));
      expect(dynamo.length, order).toBeLessThanOrEqual(calls);
      expect(sequentialSteps(dynamo).length, order).toBeLessThanOrEqual(steps);
      expect(
        dynamo.map((c) => c.command),
        order,
      ).not.toContain('Scan');
      expect(result.headers?.['content-encoding']).toBe('gzip');
      expect((bytesOf(result) + assetsGzipped) / KIB).toBeLessThanOrEqual(FIRST_LOAD_KIB);
    },
  );
});

describe('console bundles', () => {
  const pages = [...new Set((routes as readonly Route[]).filter(isConsolePage).map((r) => r.handler))];
  it.each(pages)(`%s stays within the trigger's budget (${TRIGGER_BUDGET_KIB} KiB)`, async (handler) => {
    const { bytes } = await bundle(handler);
    expect(bytes / KIB).toBeLessThanOrEqual(TRIGGER_BUDGET_KIB);
  });
});
