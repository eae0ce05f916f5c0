import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config, Plan } from '../../config.ts';
import { db, tableName } from '../../clients.ts';
import { isConditionFailure, isTransactionConflict } from '../../errors.ts';
import { logger } from '../../logger.ts';
import { lostRace, retryConflicts } from '../conflicts.ts';
import { genCondition, memberGenName } from './user.ts';

// Access pattern: the account's rate window (docs/data-model.md "Rate counters"): up to COUNTER_RATE
// requests a second of limit, on the account item (counter 0) alone; above, on n = ceil(limit /
// COUNTER_RATE) counters, the account item and `RATE#<account>#<i>` / `RATE` (i in 1..n-1, a partition
// each), each admitting its share. Counters carry copies of the plan, the layout and the members'
// generations, written with every change of them: a removed member's key is refused on any, at once.

/** Requests a second one counter takes at most before the limit is spread over more (half an item's write limit). */
export const COUNTER_RATE = 500;
/** At most this many counters (a membership change writes each in one transaction). */
export const MAX_COUNTERS = 64;
/** The rate window (the plans' limits are per minute). */
export const RATE_WINDOW_SECONDS = 60;

/** The account item (counter 0). */
export const accountKey = (accountId: string) => ({ PK: `ACC#${accountId}`, SK: 'ACCOUNT' });
/** Counter `i` of an account: 0 is the account item, the others partitions of their own. */
export const counterKey = (accountId: string, i: number) =>
  i === 0 ? accountKey(accountId) : { PK: `RATE#${accountId}#${i}`, SK: 'RATE' };

/** How many counters a per-minute limit is spread over: one up to COUNTER_RATE requests a second. */
export const countersFor = (perMinute: number) =>
  Math.min(MAX_COUNTERS, Math.max(1, Math.ceil(perMinute / RATE_WINDOW_SECONDS / COUNTER_RATE)));
/** The counters a plan's limit needs under the current settings (RATE_LIMITS). */
export const planCounters = (plan: Plan) => countersFor(config().rateLimits[plan]);
/** Counter `i`'s share of `limit` over `n` counters: the shares add up to the limit exactly. */
export const shareOf = (limit: number, n: number, i: number) => Math.floor(limit / n) + (i < limit % n ? 1 : 0);

/** Counters in use: `n`, and `next` from the window starting at `from` (every request of a window divides by one number). */
export type Layout = { n: number; next?: number; from?: number };
export const layoutOf = (item: Record<string, unknown>): Layout =>
  item.rateCountersNext === undefined
    ? { n: Number(item.rateCounters ?? 1) }
    : { n: Number(item.rateCounters ?? 1), next: Number(item.rateCountersNext), from: Number(item.rateCountersFrom) };
/** The counters in use in the window that starts at `start` (epoch seconds). */
export const inUse = (l: Layout, start: number) => (l.next !== undefined && start >= (l.from as number) ? l.next : l.n);
/** Counters 1..existing-1 exist and carry current copies. */
export const existing = (l: Layout) => Math.max(l.n, l.next ?? 1);
const target = (l: Layout) => l.next ?? l.n;
export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);
const windowStart = (now: number, windowSeconds: number) => Math.floor(now / 1000 / windowSeconds) * windowSeconds;

/** The layout's attributes as written on every item (absent under one counter: the account item as before). */
const layoutAttributes = (l: Layout) => ({
  ...(l.n > 1 || l.next !== undefined ? { rateCounters: l.n } : {}),
  ...(l.next !== undefined ? { rateCountersNext: l.next, rateCountersFrom: l.from } : {}),
});

/** The account item and its counters 1..n-1 for a new account (put with it; nothing is counted yet). */
export function newAccountItems(account: { accountId: string; plan: Plan }) {
  const layout = { n: planCounters(account.plan) };
  return {
    layout: layoutAttributes(layout),
    counters: range(1, layout.n).map((i) => ({
      ...counterKey(account.accountId, i),
      type: 'rateCounter',
      accountId: account.accountId,
      plan: account.plan,
      ...layoutAttributes(layout),
    })),
  };
}

/** Where this instance sends an account's next request: the counters it last saw in use, taken in turn. */
const routes = new Map<string, number>();
/** The window this instance last saw on each counter (`<account>#<i>`) of a spread account. */
const windows = new Map<string, number>();
let turn = Math.floor(Math.random() * 1_000_000);
const pick = (accountId: string) => {
  const n = routes.get(accountId) ?? 1;
  return n === 1 ? 0 : turn++ % n;
};
const remember = (accountId: string, n: number) => {
  if (routes.size > 10_000) routes.clear();
  if (n === 1) routes.delete(accountId);
  else routes.set(accountId, n);
};

/** A key's owner as the key knows them: their id and the membership generation it was made under. */
export type KeyOwner = { userId: string; gen: number };

type Counted = { count: number; item: Record<string, any> } | 'owner-changed' | 'missing';

/** One request counted on counter `i` in the window starting at `start` (the account item's write as before). */
async function countOn(accountId: string, i: number, start: number, owner: KeyOwner | undefined): Promise<Counted> {
  const writes = [
    ['ADD #count :one', '#window >= :start'],
    ['SET #window = :start, #count = :one', '(attribute_not_exists(#window) OR #window < :start)'],
  ] as const;
  const ownerCheck = owner ? ` AND ${genCondition(owner.gen)}` : '';
  // The two conditions cover every state of an existing counter, so only a lost race tries again.
  // Spread thin, a counter sees a request now and then: start its window first when this instance has
  // not seen it started (one write, not a refused one and another). The account item alone: as always.
  const first = routes.has(accountId) && windows.get(`${accountId}#${i}`) !== start ? 1 : 0;
  let inFlight = 0;
  for (let attempt = first; attempt < first + 6; attempt++) {
    const [update, condition] = writes[attempt % 2] as (typeof writes)[number];
    try {
      const { Attributes = {} } = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: counterKey(accountId, i),
          UpdateExpression: update,
          ConditionExpression: `attribute_exists(PK) AND ${condition}${ownerCheck}`,
          ExpressionAttributeNames: {
            '#window': 'rateWindow',
            '#count': 'rateCount',
            ...(owner ? { '#gen': memberGenName(owner.userId) } : {}),
          },
          ExpressionAttributeValues: { ':one': 1, ':start': start, ...(owner ? { ':gen': owner.gen } : {}) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (windows.size > 10_000) windows.clear();
      windows.set(`${accountId}#${i}`, Number(Attributes.rateWindow));
      return { count: Number(Attributes.rateCount), item: Attributes };
    } catch (e) {
      // A transaction holds the item (AWS only: a membership change writes every counter): the same write, shortly.
      if (isTransactionConflict(e) && inFlight++ < 3) {
        await new Promise((r) => setTimeout(r, 10 * inFlight));
        attempt--;
        continue;
      }
      if (!isConditionFailure(e)) throw e;
    }
    // Both window states refused: the account (or counter) is gone, or (for a key) its owner changed. Off the usual path.
    if ((owner || i > 0) && (attempt - first) % 2 === 1) {
      const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: counterKey(accountId, i), ConsistentRead: true }));
      if (!Item) return 'missing';
      if (owner && Number(Item[memberGenName(owner.userId)] ?? 0) !== owner.gen) return 'owner-changed';
    }
  }
  return 'missing';
}

/**
 * Count one request in the account's current fixed window and return the count on the counter it
 * landed on, that counter (`counter`, of `counters` in use: 0 is the account item), the window's reset
 * and the plan: one round trip, no separate read of the plan, and a plan change applies to the next
 * request. The first request of a window on a counter starts it afresh (a second, conditional write); a
 * request whose clock is behind counts in the newer window already started. `undefined` when the
 * account does not exist.
 *
 * With `owner` (a key's request), the write is also conditional on the owner's membership generation
 * on that counter being the key's (users.ts `memberGenName`; counters carry a copy written with every
 * change): a key whose owner was disabled or removed since it was made is refused here, in every
 * instance at once, by the write the request makes anyway. `'owner-changed'` then, and nothing is counted.
 */
export async function countAccountRequest(
  accountId: string,
  windowSeconds: number,
  now: number,
  owner?: KeyOwner,
): Promise<{ count: number; resetAt: number; plan: Plan; counter: number; counters: number } | 'owner-changed' | undefined> {
  const start = windowStart(now, windowSeconds);
  let i = pick(accountId);
  let r = await countOn(accountId, i, start, owner);
  let n = typeof r === 'object' ? inUse(layoutOf(r.item), start) : 1;
  // Not counted on a counter in use (gone, out of use in this window since the number changed, or its
  // copy refuses the key): the account item decides, always in use and always current.
  if (i > 0 && (typeof r !== 'object' || i >= n)) {
    routes.delete(accountId);
    i = 0;
    r = await countOn(accountId, 0, start, owner);
    n = typeof r === 'object' ? inUse(layoutOf(r.item), start) : 1;
  }
  if (r === 'missing') return undefined;
  if (r === 'owner-changed') return r;
  remember(accountId, n);
  const plan = Plan.parse(r.item.plan);
  // The plan's limit (or RATE_LIMITS) now needs another number of counters: seen on the account item.
  if (i === 0 && target(layoutOf(r.item)) !== planCounters(plan)) await reshardSoon(accountId, now);
  return { count: r.count, resetAt: Number(r.item.rateWindow) + windowSeconds, plan, counter: i, counters: n };
}

const lastReshard = new Map<string, number>();
/** At most one try every 10 s per account and instance (another instance may be at it). */
async function reshardSoon(accountId: string, now: number) {
  if (now - (lastReshard.get(accountId) ?? 0) < 10_000) return;
  lastReshard.set(accountId, now);
  // The request was counted already; a failure here (another instance at it) is tried again later.
  await reshard(accountId, now).catch((error: Error) => logger.warn('rate counters not changed', { accountId, error }));
}

/** The version condition on the account item: nothing copied onto its counters changed since `item` was read. */
const versionCondition = (item: Record<string, unknown>) =>
  item.copiesVersion === undefined ? 'attribute_not_exists(copiesVersion)' : 'copiesVersion = :version';
const versionValue = (item: Record<string, unknown>) => (item.copiesVersion === undefined ? {} : { ':version': item.copiesVersion });

/**
 * Bring the account's counters to the number its plan needs (`planCounters`), from the next window on:
 * one transaction that writes the new layout on the account item and every counter, puts the counters
 * not in use yet with copies of the plan and the members' generations, and is conditional on none of
 * them having changed since they were read (`copiesVersion`, which every change of a copy raises).
 */
export async function reshard(accountId: string, now = Date.now()): Promise<void> {
  await retryConflicts(
    async () => {
      const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: accountKey(accountId), ConsistentRead: true }));
      if (!Item) return;
      const plan = Plan.parse(Item.plan);
      const was = layoutOf(Item);
      const desired = planCounters(plan);
      if (target(was) === desired) return;
      const start = windowStart(now, RATE_WINDOW_SECONDS);
      const current = inUse(was, start);
      const layout: Layout = desired === current ? { n: current } : { n: current, next: desired, from: start + RATE_WINDOW_SECONDS };
      const attrs = {
        rateCounters: layout.n,
        ...(layout.next !== undefined ? { rateCountersNext: layout.next, rateCountersFrom: layout.from } : {}),
      };
      const names = Object.fromEntries(Object.keys(attrs).map((k) => [`#${k}`, k]));
      const values = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [`:${k}`, v]));
      const sets = Object.keys(attrs).map((k) => `#${k} = :${k}`);
      const remove = layout.next === undefined ? ' REMOVE rateCountersNext, rateCountersFrom' : '';
      const gens = Object.fromEntries(Object.entries(Item).filter(([k]) => k.startsWith('memberGen#')));
      const TransactItems = [
        {
          Update: {
            TableName: tableName(),
            Key: accountKey(accountId),
            UpdateExpression: `SET ${sets.join(', ')}${remove} ADD copiesVersion :one`,
            ConditionExpression: `attribute_exists(PK) AND #plan = :plan AND ${versionCondition(Item)}`,
            ExpressionAttributeNames: { ...names, '#plan': 'plan' },
            ExpressionAttributeValues: { ...values, ':one': 1, ':plan': plan, ...versionValue(Item) },
          },
        },
        // Counters that carry current copies get the layout and the plan (those it leaves out of use
        // too); the others are put afresh (none is in use in this window: their old counts do not count).
        ...range(1, Math.max(existing(layout), existing(was))).map((j) =>
          j < existing(was)
            ? {
                Update: {
                  TableName: tableName(),
                  Key: counterKey(accountId, j),
                  UpdateExpression: `SET ${[...sets, '#plan = :plan'].join(', ')}${remove}`,
                  ConditionExpression: 'attribute_exists(PK)',
                  ExpressionAttributeNames: { ...names, '#plan': 'plan' },
                  ExpressionAttributeValues: { ...values, ':plan': plan },
                },
              }
            : {
                Put: {
                  TableName: tableName(),
                  Item: { ...counterKey(accountId, j), type: 'rateCounter', accountId, plan, ...attrs, ...gens },
                },
              },
        ),
      ];
      await db().send(new TransactWriteCommand({ TransactItems }));
    },
    { attempts: 4, retryOn: lostRace },
  );
}

/** For tests: forget where this instance sends requests. */
export function forgetRoutes() {
  routes.clear();
  windows.clear();
  lastReshard.clear();
}
