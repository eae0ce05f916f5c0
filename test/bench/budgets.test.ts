import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '../../shared/clients.ts';
import { useOwnQueues } from '../support/engine.ts';
import { bundle, KIB } from './bundles.ts';
import { instrumentClients } from './counting.ts';
import { type BenchData, givenBenchData, measureRoundTrips, type RoundTrips, triggerRequest } from './scenarios.ts';

/**
 * The fast variant of `npm run bench` (README "Performance"), run by `npm test` in CI as a regression
 * check: SDK calls and sequential I/O steps per request on the emulators, and the trigger's bundle
 * size. Counts only, never times. The limits are the figures reached; README explains the issue's
 * budgets that the data model puts out of reach (cold trigger, bundle size).
 */

let rows: RoundTrips[];
let data: BenchData;
beforeAll(async () => {
  await useOwnQueues();
  await instrumentClients();
  data = await givenBenchData();
  rows = await measureRoundTrips(data);
}, 120_000);

const row = (scenario: string) => {
  const r = rows.find((x) => x.scenario.startsWith(scenario));
  if (!r) throw new Error(`no row ${scenario}`);
  return r;
};

describe('round trips per request', () => {
  it.each([
    // scenario, status, SDK calls, sequential steps
    ['trigger (cold cache)', 200, 4, 3],
    ['trigger (warm cache)', 200, 3, 2],
    ['approval POST (warm cache)', 200, 7, 5],
    ['v1 start (warm cache)', 202, 5, 3],
    ['v1 read (warm cache)', 200, 3, 2],
  ])('%s: %i with at most %i SDK calls in %i sequential steps', (scenario, status, calls, steps) => {
    const r = row(scenario);
    expect(r.status, r.path).toBe(status);
    expect(r.calls, r.path).toBeLessThanOrEqual(calls);
    expect(r.steps, r.path).toBeLessThanOrEqual(steps);
  });

  it('a cold trigger reads the webhook and key together, counts the request (which returns the plan), then writes and sends together', () => {
    expect(row('trigger (cold cache)').path).toBe('BatchGetItem → UpdateItem → TransactWriteItems‖SendMessage');
  });

  it('a warm trigger reads nothing: the rate-limit count, then the start transaction beside the queue message', () => {
    expect(row('trigger (warm cache)').path).toBe('UpdateItem → TransactWriteItems‖SendMessage');
  });

  it("a trigger's transaction writes only the run's own new items, so concurrent triggers of one webhook never conflict", async () => {
    const client = db();
    const send = vi.spyOn(client, 'send');
    try {
      const res = await triggerRequest(data.teamHook.webhook.webhookId, data.teamHook.key.token);
      expect(res.status).toBe(200);
      const transactions = send.mock.calls.map(([command]) => command).filter((c) => c instanceof TransactWriteCommand);
      expect(transactions).toHaveLength(1);
      const items = (transactions[0] as TransactWriteCommand).input.TransactItems ?? [];
      expect(items.map((i) => Object.keys(i))).toEqual([['Put'], ['Put']]);
      expect(items.map((i) => String(i.Put?.Item?.PK))).toEqual([`ACC#${data.team.account.accountId}`, expect.stringMatching(/#EX#ex_/)]);
      expect(items[0]?.Put?.ConditionExpression).toBe('attribute_not_exists(PK)');
    } finally {
      send.mockRestore();
    }
  });

  it('a rate-limited trigger answers 429 and writes no execution (no transaction at all)', () => {
    const r = row('trigger rate-limited');
    expect(r.status).toBe(429);
    expect(r.raw.map((c) => c.command)).not.toContain('TransactWriteItems');
    expect(r.raw.map((c) => c.command)).not.toContain('SendMessage');
  });
});

describe('bundle size', () => {
  it('the trigger, bundled with the CDK settings (SDK inside), stays under 860 KiB (820 KiB measured)', async () => {
    const { bytes } = await bundle('http/webhooks/trigger');
    expect(bytes / KIB).toBeLessThan(860);
  });
});
