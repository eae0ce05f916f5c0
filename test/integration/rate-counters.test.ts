import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { db, tableName } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { setPlan } from '../../shared/db/entities/account.ts';
import {
  counterKey,
  countersFor,
  forgetRoutes,
  layoutOf,
  RATE_WINDOW_SECONDS,
  reshard,
  shareOf,
} from '../../shared/db/entities/rate-counters.ts';
import { memberGenItems } from '../../shared/db/entities/rate-counter-copies.ts';
import { memberGenName } from '../../shared/db/entities/user.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { removeMember, updateMember } from '../../shared/domain/members.ts';
import { takeAccountBudget } from '../../shared/domain/rate-limit.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';

/**
 * The rate window above one counter's rate (COUNTER_RATE, 500 requests/s): a plan of 120,000 requests a
 * minute (2,000/s) is spread over 4 counters (the account item and RATE#<account>#1..3), each admitting
 * a quarter. Shares add up to the limit (never more admitted in a window), a removed or disabled
 * member's key is refused at once on every counter, and a plan change reaches every counter.
 */
const BIG = 120_000;
beforeAll(() => {
  process.env.RATE_LIMITS = JSON.stringify({ team: BIG, enterprise: 240_000 });
  resetConfig();
});
afterAll(() => {
  delete process.env.RATE_LIMITS;
  resetConfig();
});

const item = async (accountId: string, i: number) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: counterKey(accountId, i), ConsistentRead: true }))).Item ?? {};
const windowNow = () => Math.floor(Date.now() / 1000 / RATE_WINDOW_SECONDS) * RATE_WINDOW_SECONDS;
const callV1 = (token: string) => invoke(v1Me, apiEvent({ path: '/api/v1/me', headers: bearer(token) }));
const sessionOf = (accountId: string, userId: string) => ({ kind: 'session', accountId, userId, role: 'admin', sessionId: '' }) as const;

describe('counters and shares', () => {
  it('one counter up to 500 requests/s (30,000 a minute), ceil(limit / 500) above, at most 64; shares add up to the limit', () => {
    expect([60, 30_000, 30_001, 60_000, 120_000, 1_000_000, 100_000_000].map(countersFor)).toEqual([1, 1, 2, 2, 4, 34, 64]);
    for (const [limit, n] of [
      [120_000, 4],
      [10, 3],
      [60_001, 7],
    ] as const) {
      const shares = Array.from({ length: n }, (_, i) => shareOf(limit, n, i));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(limit);
      expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
    }
  });

  it('a new account of a plan above one counter gets its counters with the plan; one under it gets none (the account item as before)', async () => {
    const big = await givenAccount({ plan: 'team' });
    expect(await item(big.account.accountId, 0)).toMatchObject({ rateCounters: 4 });
    for (const i of [1, 2, 3])
      expect(await item(big.account.accountId, i)).toMatchObject({
        type: 'rateCounter',
        plan: 'team',
        rateCounters: 4,
        accountId: big.account.accountId,
      });
    expect(await item(big.account.accountId, 4)).toEqual({});
    const small = await givenAccount({ plan: 'pro' });
    expect((await item(small.account.accountId, 0)).rateCounters).toBeUndefined();
    expect(await item(small.account.accountId, 1)).toEqual({});
  });

  it('spreads requests over the counters, one write each, and never admits more than the limit in a window', async () => {
    const { account, memberKey } = await givenAccount({ plan: 'team' });
    for (let i = 0; i < 8; i++) expect((await callV1(memberKey.token)).status).toBe(200);
    const counts = await Promise.all([0, 1, 2, 3].map(async (i) => Number((await item(account.accountId, i)).rateCount ?? 0)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(8);
    expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1);
    // Every counter two requests short of its share: 8 more in all, however they land.
    const start = windowNow();
    for (const i of [0, 1, 2, 3])
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: counterKey(account.accountId, i),
          UpdateExpression: 'SET rateWindow = :w, rateCount = :c',
          ExpressionAttributeValues: { ':w': start, ':c': shareOf(BIG, 4, i) - 2 },
        }),
      );
    const results = await Promise.all(Array.from({ length: 24 }, () => callV1(memberKey.token)));
    if (windowNow() !== start) return; // the minute turned meanwhile: nothing to compare
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeLessThanOrEqual(8);
    expect(admitted).toBeGreaterThanOrEqual(6); // taken in turn: unevenly only across counters
    for (const r of results) expect(r.headers['x-ratelimit-limit']).toBe(String(BIG));
    expect(results.filter((r) => r.status === 429).every((r) => r.json.code === 'RATE_LIMITED')).toBe(true);
  });
});

describe('one write a request', () => {
  it('under one counter’s rate: the account item’s increment alone, as before; above it: one counter’s increment', async () => {
    const small = await givenAccount({ plan: 'pro' });
    const big = await givenAccount({ plan: 'team' });
    const started = windowNow();
    await takeAccountBudget(small.account.accountId);
    for (let i = 0; i < 4; i++) await takeAccountBudget(big.account.accountId);
    const send = vi.spyOn(db(), 'send');
    try {
      await takeAccountBudget(small.account.accountId);
      if (windowNow() !== started) return; // the minute turned: its first request takes two writes
      expect(send.mock.calls.map(([c]) => [c.constructor.name, (c.input as { Key?: unknown }).Key])).toEqual([
        ['UpdateCommand', counterKey(small.account.accountId, 0)],
      ]);
      expect((send.mock.calls[0]?.[0] as { input: { UpdateExpression: string } } | undefined)?.input.UpdateExpression).toBe(
        'ADD #count :one',
      );
      send.mockClear();
      for (let i = 0; i < 8; i++) await takeAccountBudget(big.account.accountId);
      const keys = send.mock.calls.map(([c]) => [c.constructor.name, JSON.stringify((c.input as { Key?: unknown }).Key)]);
      if (windowNow() !== started) return;
      expect(keys.every(([name]) => name === 'UpdateCommand')).toBe(true);
      expect(keys).toHaveLength(8);
      expect(new Set(keys.map(([, k]) => k)).size).toBe(4);
    } finally {
      send.mockRestore();
    }
  });
});

describe('a transaction in flight on a counter (AWS only: DynamoDB Local serializes them)', () => {
  it('the metering write refused for it is tried again: the request counts once, no 500', async () => {
    const a = await givenAccount({ plan: 'pro' });
    await takeAccountBudget(a.account.accountId);
    const client = db();
    const send = client.send.bind(client);
    let refused = 0;
    const spy = vi.spyOn(client, 'send').mockImplementation((async (command: unknown, ...rest: unknown[]) => {
      if (command instanceof UpdateCommand && refused < 2) {
        refused++;
        throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
      }
      return (send as (...x: unknown[]) => unknown)(command, ...rest);
    }) as never);
    let before: number | undefined;
    try {
      before = Number(
        (await send(new GetCommand({ TableName: tableName(), Key: counterKey(a.account.accountId, 0), ConsistentRead: true }))).Item
          ?.rateCount,
      );
      const r = await takeAccountBudget(a.account.accountId);
      expect(r).toBeDefined();
    } finally {
      spy.mockRestore();
    }
    expect(refused).toBe(2);
    const after = Number(
      (await send(new GetCommand({ TableName: tableName(), Key: counterKey(a.account.accountId, 0), ConsistentRead: true }))).Item
        ?.rateCount,
    );
    // Counted once (a new minute would have started the window at 1).
    expect(after === before + 1 || after === 1).toBe(true);
  });
});

describe('membership generations on every counter', () => {
  it('a removed member’s key is refused at once on every counter; a disabled one’s too, and restoreKeys brings it back on every counter', async () => {
    const { account, admin } = await givenAccount({ plan: 'team' });
    const p = sessionOf(account.accountId, admin.userId);
    const a = await createUser(account.accountId, uniqueEmail('m'), PASSWORD, 'member');
    const key = await createKey(
      { accountId: account.accountId, userId: a.userId },
      { name: 'k', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    );
    for (let i = 0; i < 4; i++) expect((await callV1(key.token)).status).toBe(200);
    await updateMember(p, a.userId, { disabled: true });
    for (const i of [0, 1, 2, 3]) expect((await item(account.accountId, i))[memberGenName(a.userId)]).toBe(1);
    for (let i = 0; i < 8; i++) expect((await callV1(key.token)).status, `request ${i}`).toBe(401);
    await updateMember(p, a.userId, { disabled: false, restoreKeys: true });
    for (let i = 0; i < 8; i++) expect((await callV1(key.token)).status, `request ${i}`).toBe(200);
    await removeMember(p, a.userId);
    for (let i = 0; i < 8; i++) expect((await callV1(key.token)).status, `request ${i}`).toBe(401);
  });

  it('a removal racing requests of the member’s key: every request after it is refused', async () => {
    const { account, admin } = await givenAccount({ plan: 'team' });
    for (let round = 0; round < 5; round++) {
      const m = await createUser(account.accountId, uniqueEmail('r'), PASSWORD, 'member');
      const key = await createKey(
        { accountId: account.accountId, userId: m.userId },
        { name: 'k', scopes: ['WORKFLOW_READ'], validityDays: 1 },
      );
      await Promise.all([
        removeMember(sessionOf(account.accountId, admin.userId), m.userId),
        ...Array.from({ length: 6 }, () => callV1(key.token)),
      ]);
      const after = await Promise.all(Array.from({ length: 8 }, () => callV1(key.token)));
      expect(after.map((r) => r.status)).toEqual(Array(8).fill(401));
    }
  });

  it('members removed and disabled at once (each raising copiesVersion) all take effect: a lost race is tried again, never a 409', async () => {
    for (const plan of ['pro', 'team'] as const) {
      const { account, admin } = await givenAccount({ plan });
      const p = sessionOf(account.accountId, admin.userId);
      const ms = await Promise.all([0, 1, 2, 3].map((i) => createUser(account.accountId, uniqueEmail(`c${i}`), PASSWORD, 'member')));
      await Promise.all([
        removeMember(p, (ms[0] as { userId: string }).userId),
        removeMember(p, (ms[1] as { userId: string }).userId),
        updateMember(p, (ms[2] as { userId: string }).userId, { disabled: true }),
        updateMember(p, (ms[3] as { userId: string }).userId, { disabled: true }),
      ]);
      for (const m of ms) expect((await item(account.accountId, 0))[memberGenName(m.userId)]).toBe(1);
    }
  });

  it('a membership change racing a change of the number of counters leaves every counter with the current generation', async () => {
    const { account, admin } = await givenAccount({ plan: 'team' });
    const m = await createUser(account.accountId, uniqueEmail('x'), PASSWORD, 'member');
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: counterKey(account.accountId, 0),
        UpdateExpression: 'SET #plan = :p',
        ExpressionAttributeNames: { '#plan': 'plan' },
        ExpressionAttributeValues: { ':p': 'enterprise' },
      }),
    );
    await Promise.all([reshard(account.accountId), updateMember(sessionOf(account.accountId, admin.userId), m.userId, { disabled: true })]);
    const layout = layoutOf(await item(account.accountId, 0));
    expect(layout).toMatchObject({ n: 4, next: 8 });
    for (let i = 0; i < 8; i++) expect((await item(account.accountId, i))[memberGenName(m.userId)], `counter ${i}`).toBe(1);
    // The items a membership change writes: the account item and each of its 7 counters.
    expect(await memberGenItems(account.accountId, m.userId, 2)).toHaveLength(8);
  });
});

describe('plan changes', () => {
  it('reach every counter before set-plan returns; a plan needing fewer counters uses them from the next window on', async () => {
    const { account, memberKey } = await givenAccount({ plan: 'team' });
    await setPlan(account.accountId, 'pro');
    for (const i of [1, 2, 3]) expect((await item(account.accountId, i)).plan).toBe('pro');
    expect(layoutOf(await item(account.accountId, 0))).toEqual({ n: 4, next: 1, from: windowNow() + RATE_WINDOW_SECONDS });
    const now = Date.now();
    // This window: still 4 counters, each with a quarter of pro's limit; every request says pro.
    const before = await Promise.all(Array.from({ length: 4 }, () => takeAccountBudget(account.accountId, now)));
    expect(before.map((b) => b.plan)).toEqual(Array(4).fill('pro'));
    for (let i = 0; i < 4; i++) expect((await callV1(memberKey.token)).json).toMatchObject({ plan: 'pro' });
    // The next window: the account item alone, against pro's whole limit.
    forgetRoutes();
    const next = (windowNow() + RATE_WINDOW_SECONDS) * 1000 + 1000;
    for (let i = 0; i < 3; i++) await takeAccountBudget(account.accountId, next);
    const counted = await Promise.all([0, 1, 2, 3].map(async (i) => await item(account.accountId, i)));
    expect(counted[0]).toMatchObject({ rateWindow: windowNow() + RATE_WINDOW_SECONDS, rateCount: 3 });
    for (const c of counted.slice(1)) expect(c.rateWindow === windowNow() + RATE_WINDOW_SECONDS).toBe(false);
  });

  it('a plan above one counter gets its counters from the next window on; RATE_LIMITS raised the same, at the first request', async () => {
    const { account } = await givenAccount({ plan: 'pro' });
    await setPlan(account.accountId, 'team');
    expect(layoutOf(await item(account.accountId, 0))).toEqual({ n: 1, next: 4, from: windowNow() + RATE_WINDOW_SECONDS });
    for (const i of [1, 2, 3]) expect(await item(account.accountId, i)).toMatchObject({ plan: 'team', rateCountersNext: 4 });
    const other = await givenAccount({ plan: 'pro' });
    process.env.RATE_LIMITS = JSON.stringify({ team: BIG, enterprise: 240_000, pro: 60_000 });
    resetConfig();
    try {
      forgetRoutes();
      await takeAccountBudget(other.account.accountId);
      expect(layoutOf(await item(other.account.accountId, 0))).toMatchObject({ n: 1, next: 2 });
      expect(await item(other.account.accountId, 1)).toMatchObject({ plan: 'pro' });
    } finally {
      process.env.RATE_LIMITS = JSON.stringify({ team: BIG, enterprise: 240_000 });
      resetConfig();
    }
  });
});
