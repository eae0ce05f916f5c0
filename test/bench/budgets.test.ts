import { BatchWriteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { db } from '../../shared/clients.ts';
import { useOwnQueues } from '../support/engine.ts';
import { bundle, bundleText, KIB } from './bundles.ts';
import { instrumentClients } from './counting.ts';
import { writeParts, writeUnits } from './write-units.ts';
import { auditItem } from '../../shared/db/entities/audit.ts';
import { INLINE_SHARE } from '../../shared/engine/inline.ts';
import { auditEntry } from '../../shared/db/audited.ts';
import {
  type BenchData,
  givenBenchData,
  measureRoundTrips,
  measureRunCosts,
  type RoundTrips,
  type RunCost,
  triggerRequest,
} from './scenarios.ts';

/**
 * The fast variant of `npm run bench` (docs/performance.md), run by `npm test` in CI as a regression
 * check: SDK calls, write units and sequential I/O steps per request and per run on the emulators,
 * and the trigger's and the health route's bundle sizes. Counts only, never times. The limits are the
 * figures reached; docs/performance.md explains the budgets that the data model puts out of reach (cold
 * trigger, approval POST).
 */

/**
 * A 100-item for_each of `set`, trigger to SUCCEEDED (the figure measured, docs/performance.md): its 201 step events, about 40 KB in a few event items, written transactionally (×2).
 * 94 before the account's runs were listed on GSI3 (issue 32): its entry is written once, with the run (1 unit).
 */
const LOOP_100_WRITE_UNITS = 95;

let rows: RoundTrips[];
let costs: RunCost[];
let data: BenchData;
beforeAll(async () => {
  // Counts, not times: the inline share's 50 ms is the machine's speed (a busy machine would queue the
  // 100-item loop and change its path); its step limit stays.
  INLINE_SHARE.ms = 60_000;
  await useOwnQueues();
  await instrumentClients();
  data = await givenBenchData();
  rows = await measureRoundTrips(data);
  costs = await measureRunCosts(data);
}, 120_000);

const row = (scenario: string) => {
  const r = rows.find((x) => x.scenario.startsWith(scenario));
  if (!r) throw new Error(`no row ${scenario}`);
  return r;
};

describe('round trips per request', () => {
  it.each([
    // scenario, status, SDK calls, sequential steps
    ['trigger (cold cache)', 200, 4, 4],
    ['trigger (warm cache)', 200, 2, 2],
    ['trigger, queued run (cold cache)', 200, 4, 3],
    ['trigger, queued run (warm cache)', 200, 3, 2],
    ['approval POST (warm cache)', 200, 5, 3],
    ['v1 start (warm cache)', 202, 5, 3],
    ['v1 read (warm cache)', 200, 3, 2],
  ])('%s: %i with at most %i SDK calls in %i sequential steps', (scenario, status, calls, steps) => {
    const r = row(scenario);
    expect(r.status, r.path).toBe(status);
    expect(r.calls, r.path).toBeLessThanOrEqual(calls);
    expect(r.steps, r.path).toBeLessThanOrEqual(steps);
  });

  // Its workflow is one `set` step: the run finishes in its trigger (docs/runs-and-events.md), which reads the
  // workflow as it is now (a 5 s cache) and writes the run once, ended, with no message.
  it('a cold trigger reads the webhook and key together, counts the request (which returns the plan), reads the workflow, then writes the run ended', () => {
    expect(row('trigger (cold cache)').path).toBe('BatchGetItem → UpdateItem → GetItem → BatchWriteItem');
  });

  it('a warm trigger reads nothing: the rate-limit count, then the ended run (one BatchWrite)', () => {
    expect(row('trigger (warm cache)').path).toBe('UpdateItem → BatchWriteItem');
  });

  it('a trigger whose run is queued writes the start beside the queue message (cold: the webhook and key read together first)', () => {
    expect(row('trigger, queued run (cold cache)').path).toBe('BatchGetItem → UpdateItem → BatchWriteItem‖SendMessage');
    expect(row('trigger, queued run (warm cache)').path).toBe('UpdateItem → BatchWriteItem‖SendMessage');
  });

  it("a trigger writes only the run's own two new items, in no transaction: concurrent triggers of one webhook never conflict", async () => {
    const client = db();
    const send = vi.spyOn(client, 'send');
    try {
      const res = await triggerRequest(data.teamHook.webhook.webhookId, data.teamHook.key.token);
      expect(res.status).toBe(200);
      const commands = send.mock.calls.map(([command]) => command);
      expect(commands.filter((c) => c instanceof TransactWriteCommand)).toHaveLength(0);
      const batches = commands.filter((c) => c instanceof BatchWriteCommand) as BatchWriteCommand[];
      expect(batches).toHaveLength(1);
      const puts = Object.values(batches[0]?.input.RequestItems ?? {}).flat();
      expect(puts.map((r) => [String(r.PutRequest?.Item?.PK), String(r.PutRequest?.Item?.SK)])).toEqual([
        [`EX#${data.team.account.accountId}#${res.json.executionId}`, 'EXECUTION'],
        [`ACC#${data.team.account.accountId}#EX#${res.json.executionId}`, expect.stringMatching(/^EV#ev_/)],
      ]);
    } finally {
      send.mockRestore();
    }
  });

  it("a warm approval POST reads only the approval, then writes the decision beside the run's message (no read of the run)", () => {
    // The metering write beside the key's strongly consistent read (what refuses a key revoked elsewhere
    // at once; its usage is counted in the instance, issue 32: a busy key takes reads, not a write each).
    expect(row('approval POST (warm cache)').path).toBe('UpdateItem‖GetItem → GetItem → SendMessage‖TransactWriteItems');
  });

  it('a rate-limited trigger answers 429 and writes no execution (no transaction at all)', () => {
    const r = row('trigger rate-limited');
    expect(r.status).toBe(429);
    expect(r.raw.map((c) => c.command)).not.toContain('TransactWriteItems');
    expect(r.raw.map((c) => c.command)).not.toContain('SendMessage');
    // The refusal and the key's use are counted in the instance, written with its counts at most once a second. The
    // webhook's inbound log (issue 47) is written by a refused request that finds its instance's last write of it a
    // second old or more, as this one does: its head, then its slots (docs/webhooks.md "Why was my request refused?").
    expect(r.path).toBe('UpdateItem → UpdateItem → BatchWriteItem');
  });
});

const cost = (scenario: string) => {
  const c = costs.find((x) => x.scenario.startsWith(scenario));
  if (!c) throw new Error(`no row ${scenario}`);
  return c;
};

describe('what a run that finishes in its trigger costs (docs/runs-and-events.md)', () => {
  it('a one-step run: the rate-limit count and one BatchWrite of the ended run and its events, 5 write units (16 queued)', () => {
    const c = cost('finished in its trigger: webhook run, 1 set step');
    expect(c.status, c.path).toBe('SUCCEEDED');
    expect(c.path).toBe('UpdateItem → BatchWriteItem');
    // The rate window 1; the run item 2 (about 1.1 KB ended), its listing entries on GSI1 and GSI3 1 each; its events 1 item.
    expect(c.writeUnits, c.path).toBeLessThanOrEqual(5);
    expect(c.writeUnits).toBeLessThan(cost('webhook run, 1 set step, trigger').writeUnits / 3);
  });

  it('five set steps, a switch, and a 100-item loop: still one write, their events packed into as few items as fit', () => {
    for (const scenario of ['5 set steps', '3-case switch', 'for_each of 100']) {
      const c = cost(`finished in its trigger: webhook run, ${scenario}`);
      expect(c.status, scenario).toBe('SUCCEEDED');
      expect(c.path, scenario).toBe('UpdateItem → BatchWriteItem');
    }
    expect(cost('finished in its trigger: webhook run, 5 set steps').writeUnits).toBeLessThanOrEqual(8);
    expect(cost('finished in its trigger: webhook run, for_each of 100').writeUnits).toBeLessThanOrEqual(44);
  });

  it('set → http_request → switch → set: its trigger runs the set and writes the run at the request; the worker claims it and writes once more, at the end', () => {
    const c = cost('handed to the worker at its http_request');
    expect(c.status, c.path).toBe('SUCCEEDED');
    // The metering and the start (the run at the request, the set's events); the claim, the request, the end; the batch's counts.
    expect(c.path).toBe('UpdateItem → BatchWriteItem → UpdateItem → TransactWriteItems → UpdateItem‖UpdateItem‖UpdateItem');
    // 2 transactions, 8 calls and 27 units before the trigger ran the set (the worker wrote its progress before the request);
    // 23 before the end's three steps' events shared one item (21 measured since).
    expect(c.calls, c.path).toBeLessThanOrEqual(7);
    expect(c.writeUnits, c.path).toBeLessThanOrEqual(21);
  });
});

describe('what a queued run costs in DynamoDB (issue 12 targets; INLINE_RUNS=off, or any workflow with an external step)', () => {
  // 16 and 14.2 write units before the account's runs were listed on GSI3 (issue 32, write-sharded
  // listings): the run's entry there is written once, with the run, 1 unit. 17 and 15.2 before the
  // model billed the end transaction's index change (the active entry removed) once, as DynamoDB does.
  // 6 calls before the overview's hour counts (docs/console.md "The overview"): the run's start and end are
  // counted in the instance and written with the batch's other counts, one UpdateItem per account and hour
  // beside them (the same step): one more call for a batch of one run, a tenth of one for ten.
  it('a one-step webhook run alone in its worker batch, trigger 200 → SUCCEEDED, counting included: at most 7 calls and 17 write units', () => {
    const c = cost('webhook run, 1 set step, trigger');
    expect(c.status, c.path).toBe('SUCCEEDED');
    expect(c.calls, c.path).toBeLessThanOrEqual(7);
    // 16 before the hour counts: their item's write is 1 unit (a small item).
    expect(c.writeUnits, c.path).toBeLessThanOrEqual(17);
    // The metering, the run's start, the claim, one write for the step and the end, then the batch's counts together.
    expect(c.path).toBe('UpdateItem → BatchWriteItem → UpdateItem → TransactWriteItems → UpdateItem‖UpdateItem‖UpdateItem');
  });

  it("ten one-step runs of one webhook in one worker batch: the webhook's stats and the key's usage written once for the batch", () => {
    const c = cost('webhook run, 1 set step, 10 runs');
    expect(c.status).toBe('SUCCEEDED');
    // Per run: the metering, the start, the claim, the last write, and a tenth of the three counts.
    expect(c.calls).toBeLessThanOrEqual(4.3);
    expect(c.writeUnits).toBeLessThanOrEqual(14.3);
  });

  it('a retried http_request (3 attempts): one write per retry on top of a plain request run, none while it waits', () => {
    const c = cost('webhook run, 1 http_request retried');
    expect(c.status, c.path).toBe('SUCCEEDED');
    // Two writes per retry (its wait, its wake), and the last attempt's answer written with the run's end;
    // the hour counts' write joins the batch's counts (one call more, no step more).
    expect(c.calls, c.path).toBeLessThanOrEqual(10);
    expect(c.path.split(' → ').filter((x) => x === 'TransactWriteItems')).toHaveLength(4);
  });

  // 12 before the hour counts: each of the run's two worker batches writes its counts with one UpdateItem more
  // (the run's start, counted by the trigger, and its end; one process here, so the first batch writes the trigger's).
  it('a callback round trip: the wait, the report (its token read, the rate limit, one transaction) and the resume, at most 14 calls', () => {
    const c = cost('webhook run, 1 wait_for_callback');
    expect(c.status, c.path).toBe('SUCCEEDED');
    expect(c.calls, c.path).toBeLessThanOrEqual(14);
    // 43 measured, 2 of them: the report hands the run to its message, which moves its active entry to `D#<due>` (a delete and a put)
    // so that the sweep sends the message again if the report's invocation dies before its send.
    // 44 before the hour counts (their write, 1 unit, in each of the two batches).
    expect(c.writeUnits, c.path).toBeLessThanOrEqual(45);
  });

  // 1 measured; 2.5 before a write packed its steps' events into one item (an item a step, twice in the transaction).
  it('each further set step: no call of its own and at most 1.5 write units (its events, in the item the others share)', () => {
    const c = cost('each further set step');
    expect(c.status).toBe('SUCCEEDED');
    expect(c.calls).toBe(0);
    expect(cost('webhook run, 5 set steps').path).toBe(cost('webhook run, 1 set step').path);
    expect(c.writeUnits).toBeGreaterThan(0);
    expect(c.writeUnits).toBeLessThanOrEqual(1.5);
  });

  it('a 3-case switch and its jump add no DynamoDB call: the run costs what a one-step run costs', () => {
    const c = cost('webhook run, 3-case switch');
    expect(c.status, c.path).toBe('SUCCEEDED');
    expect(c.path).toBe(cost('webhook run, 1 set step, trigger').path);
    expect(c.writeUnits).toBeLessThanOrEqual(cost('webhook run, 5 set steps').writeUnits);
  });

  it('a next loop of 150 step executions writes its progress in checkpoints that fit a transaction, and nothing else more', () => {
    const c = cost('webhook run, next loop of 150');
    expect(c.status, c.path).toBe('SUCCEEDED');
    // 150 top-level steps: checkpoints of at most 64 steps' events (docs/performance.md "Long runs"), each packed into one item.
    expect(c.path.split(' → ').filter((x) => x === 'TransactWriteItems')).toHaveLength(3);
    expect(c.calls, c.path).toBe(cost('webhook run, 1 set step, trigger').calls + 2);
  });

  it('a for_each of 100 set steps adds no call either: one write, its events in a few items', () => {
    const c = cost('webhook run, for_each of 100');
    expect(c.status, c.path).toBe('SUCCEEDED');
    expect(c.path).toBe(cost('webhook run, 1 set step, trigger').path);
    expect(c.writeUnits).toBeLessThanOrEqual(LOOP_100_WRITE_UNITS);
  });
});

describe('bundle size', () => {
  // 606 KiB measured: 604.5 after issue 31's fixes, 602.6 once the HTML routes' page parts left the other
  // routes' bundles, 606 with the rate window's counters above 500 requests/s (issue 32); 597 before control
  // flow and callbacks each grew the run's record schema and the notifications' step lookup by about 2 KiB;
  // 634 before client-s3 was aliased to its three parts (22 KiB) and fast-sha256, @stablelib/base64 and
  // mnemonist's LRU cache to Node's own (16 KiB); see infra/constructs/bundling.ts.
  // 606.7 with the runs' listing shards (shardOf, LIST_SHARDS: issue 32).
  // 606.9 before the audit log; its retention setting and the caller's address on a key's principal add 0.7 (no audit code: it records no change).
  // 607.6 before failed authentications were counted per IPv6 /64 (addressUnit) under AUTHFAIL# subjects: 0.5 more (issue 41);
  // 0.4 more with the SDK plugin hook (shared/sdk-plugins.ts: the local stack's IAM) and the counters writing as their counter's function;
  // 0.6 more with the retry of DynamoDB's transaction conflicts (shared/clients.ts) and a replayed start resending its message (issue 40).
  // 0.5 more: a run handed to its message is placed by its due time in the active index (D#, issue 40), and the runs
  // messages carry the account as their group (fair queues, issue 42).
  // 830.2 with the step loop and the step types (jsonata among them) for runs that finish in their trigger
  // (docs/runs-and-events.md): 565 → 700 million instructions to import it in a fresh process (callgrind), about
  // 12 ms more of INIT on this machine, against a worker invocation and its cold starts saved for every such run.
  // 831.3 once the data layer was sealed (the entity functions the engine and the domain now call: issue 43)
  // and workflows as code merged (issue 45); 834.4 with the inbound log's recording of refused requests
  // (issue 47: masking, the buffer, the ring's writes); 835.4 once the inline path resolves a run with the
  // worker's own function (shared/engine/runs.ts resolveRun: its failure messages come along, one check instead of two);
  // about 837.5 with the overview's hour counts (the run's start and end counted by the trigger: shared/db/entities/run-hours.ts);
  // 839.0 with the heavy lane's choice (shared/engine/lanes.ts) and a run's first steps handed off by its trigger (HeldRun.handOff).
  it('the trigger, bundled with the CDK settings (SDK inside), stays within 842 KiB', async () => {
    const { bytes } = await bundle('http/webhooks/trigger');
    expect(bytes / KIB).toBeLessThanOrEqual(842);
  });

  it('the health route holds no data client: within 200 KiB (147 KiB measured)', async () => {
    const { bytes } = await bundle('http/health/get');
    expect(bytes / KIB).toBeLessThanOrEqual(200);
  });

  // 663 KiB measured: 550 before approval channels, of which SES v2 is 114 and the review links' Secrets Manager client 25.
  it('the notifications worker stays within 700 KiB and bundles no jsonata (it reads definitions, never evaluates them)', async () => {
    const { bytes, text } = await bundleText('worker/notify');
    expect(bytes / KIB).toBeLessThanOrEqual(700);
    expect(text).not.toContain('Attempted to invoke a non-function');
  });

  it("the trigger's bundle holds its own route only: no other route's schemas, no Secrets Manager", async () => {
    const { text } = await bundleText('http/webhooks/trigger');
    expect(text).toContain('/api/webhooks/{webhookId}/trigger');
    for (const other of ['/api/webhooks/{id}/stats', '/api/v1/executions', '/api/keys', '/api/auth/login'])
      expect(text).not.toContain(other);
    // The Secrets Manager client's service id (jsonata is in: the trigger evaluates the steps of runs that finish in it).
    expect(text).not.toContain('secretsmanager');
    // The HTML routes' parts (page-handler.ts): their form checks and their pages.
    expect(text).not.toContain('CROSS_SITE_REQUEST');
    expect(text).not.toContain('<!doctype html>');
  });
});

describe('what an audited change adds (docs/data-model.md "The audit log")', () => {
  // A realistic large entry: a webhook update by an API key, with its details.
  const entry = auditEntry(
    {
      accountId: `acc_${'0'.repeat(26)}`,
      kind: 'apiKey',
      userId: `usr_${'0'.repeat(26)}`,
      keyId: '0'.repeat(26),
      via: { ip: '2001:db8::1234:5678', channel: 'api' },
    },
    'webhook.updated',
    { type: 'webhook', id: `wh_${'0'.repeat(26)}`, name: 'n'.repeat(200) },
    {
      changed: ['allowedIps', 'enabled', 'name', 'secretKey', 'signatureScheme', 'variableMapping'],
      authModeFrom: 'open',
      authModeTo: 'hmac',
    },
  );

  // 4 and 6 units before the model billed a transaction's index entries once (DynamoDB writes them as standard writes).
  it("the entry in its change's transaction: 2 write units for the item and 1 for its GSI1 entry (under 1 KB each)", () => {
    const item = auditItem(entry);
    expect(writeUnits(undefined, item, true)).toBe(3);
    const parts = writeParts(undefined, item, true);
    expect(parts.map((p) => [p.index, p.units])).toEqual([
      ['table', 2],
      ['GSI1', 1],
    ]);
  });

  it("a change that was one write becomes a transaction: its own units double (a key revocation: 1 → 2), plus the entry's 3", () => {
    const key = {
      PK: `KEY#${'0'.repeat(26)}`,
      SK: 'KEY',
      type: 'apiKey',
      name: 'ci',
      scopes: ['WORKFLOW_READ'],
      createdAt: 1,
      expiresAt: 2,
    };
    const revoked = { ...key, revokedAt: 3 };
    expect(writeUnits(key, revoked, false)).toBe(1);
    expect(writeUnits(key, revoked, true) + writeUnits(undefined, auditItem(entry), true)).toBe(5);
  });
});
