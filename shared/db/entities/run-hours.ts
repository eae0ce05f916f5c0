import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { count } from '../counters.ts';

// Access pattern: an account's runs counted per hour (docs/console.md "The overview"), one item per
// account and UTC hour (PK = RUNHOURS#<account>, SK = H#<yyyy-mm-ddThh>), expired by TTL after
// `KEPT_DAYS`. The counts are increments summed in the function instance that made them and written
// once per item per flush (`counters.ts`): never a write of its own on a run's path. The overview reads
// an account's hours between two hours with one Query on its partition and sums them.

/** How long an hour's item is kept: the overview reads at most 7 days back. */
export const KEPT_DAYS = 8;
const HOUR_MS = 3_600_000;
/** Statuses an hour counts runs by: the ends, and INTERRUPTED (which a resume or cancel takes back). */
export const COUNTED_ENDS = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'INTERRUPTED'] as const;
export type CountedEnd = (typeof COUNTED_ENDS)[number];
/** The attribute of the runs started in an hour. */
const STARTED = 'started';
/** The attributes of the failed runs by error code. */
const ERROR_PREFIX = 'e:';
/** The error code counted for a failure whose code could not be kept (the item grew too large). */
export const OTHER_CODE = 'OTHER';

/** The start of the UTC hour of `at`. */
export const hourOf = (at: number) => Math.floor(at / HOUR_MS) * HOUR_MS;
const sortKey = (hour: number) => `H#${new Date(hour).toISOString().slice(0, 13)}`;
const hourKey = (accountId: string, hour: number) => ({ PK: `RUNHOURS#${accountId}`, SK: sortKey(hour) });
const isCounted = (status: string): status is CountedEnd => (COUNTED_ENDS as readonly string[]).includes(status);

async function writeHour(accountId: string, hour: number, counts: ReadonlyMap<string, number>, foldCodes = false): Promise<void> {
  const added = new Map<string, number>();
  for (const [name, n] of counts) {
    const kept = foldCodes && name.startsWith(ERROR_PREFIX) ? `${ERROR_PREFIX}${OTHER_CODE}` : name;
    added.set(kept, (added.get(kept) ?? 0) + n);
  }
  const entries = [...added].filter(([, n]) => n !== 0);
  if (entries.length === 0) return;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: hourKey(accountId, hour),
        UpdateExpression: `ADD ${entries.map((_, i) => `#a${i} :a${i}`).join(', ')} SET #type = :type, #ttl = :ttl`,
        ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl', ...Object.fromEntries(entries.map(([name], i) => [`#a${i}`, name])) },
        ExpressionAttributeValues: {
          ':type': 'runHour',
          ':ttl': Math.floor((hour + HOUR_MS) / 1000) + KEPT_DAYS * 86_400,
          ...Object.fromEntries(entries.map(([, n], i) => [`:a${i}`, n])),
        },
      }),
    );
  } catch (e) {
    // An hour with a great many distinct error codes outgrows an item (400 KB): the new ones count as OTHER.
    if (!foldCodes && (e as Error).name === 'ValidationException' && /size/i.test((e as Error).message))
      return writeHour(accountId, hour, counts, true);
    throw e;
  }
}

function add(accountId: string, at: number, counts: Record<string, number>): void {
  const hour = hourOf(at);
  count(`RUNHOURS#${accountId}#${hour}`, counts, (c) => writeHour(accountId, hour, c));
}

/** A run was written, started (its start's write succeeded): counted in the hour of `at`. */
export const countRunStarted = (accountId: string, at: number) => add(accountId, at, { [STARTED]: 1 });

/** A run as it was before a transition, or after it: its status, and what the hour it ended in needs. */
export type CountedRun = {
  accountId: string;
  status: string;
  finishedAt?: number;
  interruptedAt?: number;
  error?: { code: string };
};

const endCounts = (r: CountedRun, sign: 1 | -1): Record<string, number> => ({
  [r.status]: sign,
  ...(r.status === 'FAILED' ? { [`${ERROR_PREFIX}${r.error?.code ?? 'UNKNOWN'}`]: sign } : {}),
});

/**
 * A run's status changed by a write that succeeded (counted only after its conditional write, so a
 * replayed or refused transition counts nothing). A run that reaches an end (or INTERRUPTED) counts in
 * the hour of `now`; one that leaves such a status (a retry of a FAILED run, a resume or cancel of an
 * INTERRUPTED one) is taken back from the hour it counted in, while that hour is kept. So an hour's
 * counts are the runs whose current status is that end and that reached it in the hour.
 */
export function countRunChange(before: CountedRun, after: Omit<CountedRun, 'accountId'>, now: number): void {
  if (before.status === after.status) return;
  if (isCounted(before.status)) {
    const at = before.status === 'INTERRUPTED' ? before.interruptedAt : before.finishedAt;
    if (at !== undefined && now - at < (KEPT_DAYS - 1) * 86_400_000) add(before.accountId, at, endCounts(before, -1));
  }
  if (isCounted(after.status)) add(before.accountId, now, endCounts({ ...after, accountId: before.accountId }, 1));
}

/** One hour's counts as stored. */
export type RunHour = { hour: number; started: number; ends: Partial<Record<CountedEnd, number>>; errors: Record<string, number> };

function parseHour(item: Record<string, unknown>): RunHour {
  const sk = String(item.SK).slice(2);
  const ends: RunHour['ends'] = {};
  const errors: Record<string, number> = {};
  for (const [k, v] of Object.entries(item)) {
    if (isCounted(k)) ends[k] = Number(v);
    else if (k.startsWith(ERROR_PREFIX)) errors[k.slice(ERROR_PREFIX.length)] = Number(v);
  }
  return { hour: Date.parse(`${sk}:00:00.000Z`), started: Number(item[STARTED] ?? 0), ends, errors };
}

/** The account's hours from `from` to `to` (hour starts, both included), oldest first: one Query (two pages at most for 7 days). */
export async function readRunHours(accountId: string, from: number, to: number): Promise<RunHour[]> {
  const out: RunHour[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const res = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': `RUNHOURS#${accountId}`, ':from': sortKey(hourOf(from)), ':to': sortKey(hourOf(to)) },
        ExclusiveStartKey: startKey,
      }),
    );
    out.push(...(res.Items ?? []).map(parseHour));
    startKey = res.LastEvaluatedKey;
  } while (startKey);
  return out;
}
