import { ulid } from 'ulid';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { db } from '../../shared/clients.ts';
import { putNew } from '../../shared/db/batch.ts';
import { executionKey, executionListings } from '../../shared/db/entities/execution.ts';
import { listShards } from '../../shared/db/shards.ts';
import { newId } from '../../shared/ids.ts';
import { BACK_PAGES } from '../../shared/domain/run-list-cursor.ts';
import { FILTERED_WINDOW, FILTERED_WINDOWS, pageRunRows, type RunFilters, runsOfLastDay } from '../../shared/domain/run-list.ts';

// The console's runs listing on DynamoDB Local (shared/db/entities/execution-rows.ts, shared/domain/
// run-list.ts): a time range read by the listings' key condition (run ids are ULIDs), status and
// trigger kept from a window of rows, pages through signed cursors with no run twice and none left out.

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const MIN = 60_000;

type Made = { executionId: string; workflowId: string; at: number; status: string; trigger: string; retries?: number };

/** Runs of a fresh account, one a minute from T0 (or at `at`), stored as the engine stores them (key, listings, fields). */
async function givenRuns(specs: Partial<Made>[]) {
  const accountId = newId('acc');
  const wfA = newId('wf');
  const wfB = newId('wf');
  const runs: Made[] = specs.map((s, i) => {
    const at = s.at ?? T0 + i * MIN;
    return {
      executionId: `ex_${ulid(at).toLowerCase()}`,
      workflowId: s.workflowId === 'B' ? wfB : wfA,
      at,
      status: s.status ?? 'SUCCEEDED',
      trigger: s.trigger ?? 'api',
      ...(s.retries ? { retries: s.retries } : {}),
    };
  });
  const items = runs.map((r) => ({
    ...executionKey(accountId, r.executionId),
    ...executionListings({ accountId, workflowId: r.workflowId, executionId: r.executionId }),
    type: 'execution',
    workflowId: r.workflowId,
    status: r.status,
    trigger: r.trigger,
    recovery: false,
    variables: '{}',
    outputs: '{}',
    steps: [],
    nextStep: 0,
    startedAt: r.at,
    updatedAt: r.at,
    ...(r.status === 'FAILED' ? { finishedAt: r.at + 500, error: { code: 'STEP_FAILED', message: 'no' } } : {}),
    ...(r.retries ? { retries: r.retries } : {}),
  }));
  for (let i = 0; i < items.length; i += 25) await putNew(items.slice(i, i + 25));
  return { accountId, wfA, wfB, runs };
}

/** Every page, following the cursors; the ids of each page. */
async function follow(accountId: string, f: RunFilters, limit: number) {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await pageRunRows(accountId, f, limit, cursor);
    pages.push(page.items.map((r) => r.executionId));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && pages.length < 50);
  return pages;
}

const newestFirst = (runs: Made[]) => [...runs].sort((a, b) => b.at - a.at).map((r) => r.executionId);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the console runs listing', () => {
  it('lists runs created in a time range, newest first, exact across pages, by the key condition', { timeout: 60_000 }, async () => {
    const { accountId, wfB, runs } = await givenRuns(Array.from({ length: 20 }, (_, i) => ({ workflowId: i % 3 === 0 ? 'B' : 'A' })));
    const inRange = runs.filter((r) => r.at >= T0 + 5 * MIN && r.at <= T0 + 14 * MIN);
    expect(inRange.length).toBe(10);

    const pages = await follow(accountId, { from: T0 + 5 * MIN, to: T0 + 14 * MIN }, 3);
    expect(pages.flat()).toEqual(newestFirst(inRange));
    // The last page is the last: no "Next page" to an empty one (each shard is asked for one key more).
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 1]);

    // With only one end of the range, and by workflow (its own listing).
    expect((await follow(accountId, { from: T0 + 15 * MIN }, 4)).flat()).toEqual(newestFirst(runs.filter((r) => r.at >= T0 + 15 * MIN)));
    expect((await follow(accountId, { to: T0 + 2 * MIN }, 2)).flat()).toEqual(newestFirst(runs.filter((r) => r.at <= T0 + 2 * MIN)));
    const ofB = runs.filter((r) => r.workflowId === wfB && r.at >= T0 + 5 * MIN && r.at <= T0 + 14 * MIN);
    expect((await follow(accountId, { workflowId: wfB, from: T0 + 5 * MIN, to: T0 + 14 * MIN }, 2)).flat()).toEqual(newestFirst(ofB));
    // A range with no run, and one before any.
    expect((await follow(accountId, { from: T0 + 30 * MIN }, 5)).flat()).toEqual([]);
    expect((await follow(accountId, { to: T0 - MIN }, 5)).flat()).toEqual([]);

    // One page: a Query per shard, every one bounded by the range in its key condition (no filter), and one BatchGet.
    const send = vi.spyOn(db(), 'send');
    await pageRunRows(accountId, { from: T0 + 5 * MIN, to: T0 + 14 * MIN }, 3, undefined);
    const inputs = send.mock.calls.map(([c]) => ({ name: c.constructor.name, input: c.input as Record<string, any> }));
    const queries = inputs.filter((c) => c.name === 'QueryCommand');
    expect(queries.length).toBe(listShards());
    for (const q of queries) {
      expect(q.input.KeyConditionExpression).toBe('#pk = :pk AND #sk BETWEEN :lo AND :up');
      expect(q.input.FilterExpression).toBeUndefined();
      expect(q.input.Limit).toBe(4);
    }
    expect(inputs.filter((c) => c.name === 'BatchGetCommand').length).toBe(1);
    expect(inputs.length).toBe(listShards() + 1);
  });

  it('keeps a status or trigger from a window of rows: full pages, the cut page goes on after its last row', {
    timeout: 60_000,
  }, async () => {
    const specs = Array.from({ length: 40 }, (_, i) => ({
      status: i % 2 === 0 ? 'FAILED' : 'SUCCEEDED',
      trigger: i % 5 === 0 ? 'webhook' : 'api',
      ...(i === 7 ? { retries: 2 } : {}),
    }));
    const { accountId, runs } = await givenRuns(specs);
    const failed = runs.filter((r) => r.status === 'FAILED');
    const pages = await follow(accountId, { status: 'FAILED' }, 6);
    expect(pages.flat()).toEqual(newestFirst(failed));
    expect(pages.map((p) => p.length)).toEqual([6, 6, 6, 2]);
    expect((await follow(accountId, { trigger: 'webhook' }, 3)).flat()).toEqual(newestFirst(runs.filter((r) => r.trigger === 'webhook')));
    expect((await follow(accountId, { trigger: 'retry' }, 3)).flat()).toEqual([runs[7]?.executionId]);
    // Both, in a range.
    const both = runs.filter((r) => r.status === 'FAILED' && r.trigger === 'webhook' && r.at >= T0 + 10 * MIN);
    expect((await follow(accountId, { status: 'FAILED', trigger: 'webhook', from: T0 + 10 * MIN }, 1)).flat()).toEqual(newestFirst(both));
  });

  it('finds a sparse match within one window of FILTERED_WINDOW runs, at the same calls per page', { timeout: 60_000 }, async () => {
    const n = FILTERED_WINDOW - 10;
    const { accountId, runs } = await givenRuns(Array.from({ length: n }, (_, i) => ({ status: i === 3 ? 'CANCELLED' : 'SUCCEEDED' })));
    const send = vi.spyOn(db(), 'send');
    const page = await pageRunRows(accountId, { status: 'CANCELLED' }, 25, undefined);
    expect(page.items.map((r) => r.executionId)).toEqual([runs[3]?.executionId]);
    expect(page.nextCursor).toBeNull();
    expect(send.mock.calls.length).toBe(listShards() + 1);
  });

  it('fills a filtered page from the windows after the first, at most FILTERED_WINDOWS of them, and says when more match', {
    timeout: 60_000,
  }, async () => {
    // 600 runs, newest first the CANCELLED ones at these places: 2 in the first window, 3 in the second, 2 in the third, 2 far back.
    const at = [10, 50, 120, 150, 180, 220, 240, 560, 570];
    const n = 600;
    const { accountId, runs } = await givenRuns(
      Array.from({ length: n }, (_, i) => ({ status: at.includes(n - 1 - i) ? 'CANCELLED' : 'SUCCEEDED' })),
    );
    const cancelled = newestFirst(runs.filter((r) => r.status === 'CANCELLED'));
    const send = vi.spyOn(db(), 'send');
    const first = await pageRunRows(accountId, { status: 'CANCELLED' }, 5, undefined);
    // Full: 5 matches from three windows, and a sixth seen, so "more than 5".
    expect(first.items.map((r) => r.executionId)).toEqual(cancelled.slice(0, 5));
    expect(first.more).toBe(true);
    expect(first.offset).toBe(0);
    expect(first.previous).toBeUndefined();
    expect(send.mock.calls.length).toBe(FILTERED_WINDOWS * (listShards() + 1));
    send.mockClear();
    // The next page starts just before the sixth: it finds the sixth and seventh, then its bound (300 runs) ends it short.
    const second = await pageRunRows(accountId, { status: 'CANCELLED' }, 5, first.nextCursor ?? undefined);
    expect(second.items.map((r) => r.executionId)).toEqual(cancelled.slice(5, 7));
    expect(second.offset).toBe(5);
    expect(second.more).toBe(false);
    expect(second.previous).toEqual({ first: true });
    expect(second.nextCursor).not.toBeNull();
    expect(send.mock.calls.length).toBeLessThanOrEqual(FILTERED_WINDOWS * (listShards() + 1));
    const third = await pageRunRows(accountId, { status: 'CANCELLED' }, 5, second.nextCursor ?? undefined);
    expect(third.items.map((r) => r.executionId)).toEqual(cancelled.slice(7));
    expect(third.nextCursor).toBeNull();
    expect(third.offset).toBe(7);
    // Its Previous is the second page, whose Previous is the first.
    const back = third.previous && 'cursor' in third.previous ? third.previous.cursor : undefined;
    const again = await pageRunRows(accountId, { status: 'CANCELLED' }, 5, back);
    expect(again.items.map((r) => r.executionId)).toEqual(cancelled.slice(5, 7));
    expect(again.offset).toBe(5);
    expect(again.previous).toEqual({ first: true });
    // The overview's read: one window, whatever it finds.
    send.mockClear();
    expect((await pageRunRows(accountId, { status: 'CANCELLED' }, 5, undefined, 1)).items).toHaveLength(2);
    expect(send.mock.calls.length).toBe(listShards() + 1);
  });

  it('pages back with "Previous" to the same pages, unfiltered', { timeout: 60_000 }, async () => {
    const { accountId, runs } = await givenRuns(Array.from({ length: 10 }, () => ({})));
    const forward: string[][] = [];
    const cursors: (string | undefined)[] = [];
    let cursor: string | undefined;
    let page: Awaited<ReturnType<typeof pageRunRows>>;
    do {
      page = await pageRunRows(accountId, {}, 3, cursor);
      forward.push(page.items.map((r) => r.executionId));
      expect(page.offset).toBe(3 * cursors.length);
      expect(page.more).toBe(page.nextCursor !== null);
      cursors.push(cursor);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(forward.flat()).toEqual(newestFirst(runs));
    expect(forward.map((p) => p.length)).toEqual([3, 3, 3, 1]);
    const backward: string[][] = [];
    for (;;) {
      const prev = page.previous;
      if (!prev) break;
      page = await pageRunRows(accountId, {}, 3, 'cursor' in prev ? prev.cursor : undefined);
      backward.unshift(page.items.map((r) => r.executionId));
    }
    expect(backward).toEqual(forward.slice(0, -1));
  });

  it('remembers BACK_PAGES pages back; further back, "Newest runs"', { timeout: 60_000 }, async () => {
    const { accountId, runs } = await givenRuns(Array.from({ length: BACK_PAGES + 3 }, () => ({})));
    let page = await pageRunRows(accountId, {}, 1, undefined);
    for (let i = 1; i < BACK_PAGES + 3; i++) page = await pageRunRows(accountId, {}, 1, page.nextCursor ?? undefined);
    expect(page.items.map((r) => r.executionId)).toEqual(newestFirst(runs).slice(-1));
    expect(page.offset).toBe(BACK_PAGES + 2);
    let back = 0;
    while (page.previous && 'cursor' in page.previous) {
      page = await pageRunRows(accountId, {}, 1, page.previous.cursor);
      back++;
      expect(page.items.map((r) => r.executionId)).toEqual([newestFirst(runs)[BACK_PAGES + 2 - back]]);
    }
    expect(back).toBe(BACK_PAGES);
    expect(page.previous).toEqual({ newest: true });
  });

  it("counts the overview's last 24 hours: runs before them are not read", { timeout: 60_000 }, async () => {
    const now = T0 + 48 * 60 * MIN;
    const { accountId, runs } = await givenRuns([
      { at: now - 30 * 60 * MIN },
      { at: now - 25 * 60 * MIN, status: 'FAILED' },
      { at: now - 23 * 60 * MIN, status: 'FAILED' },
      { at: now - 60 * MIN, status: 'RUNNING' },
      { at: now - MIN },
    ]);
    const day = await runsOfLastDay(accountId, now);
    expect(day.rows.map((r) => r.executionId)).toEqual(newestFirst(runs.slice(2)));
    expect(day.rows.map((r) => r.status)).toEqual(['SUCCEEDED', 'RUNNING', 'FAILED']);
    expect(day.rows[2]?.error?.code).toBe('STEP_FAILED');
    expect(day.more).toBe(false);
  });

  it('refuses a cursor of other filters: 400 INVALID_CURSOR', { timeout: 60_000 }, async () => {
    const { accountId } = await givenRuns(Array.from({ length: 4 }, () => ({})));
    const page = await pageRunRows(accountId, { from: T0 }, 2, undefined);
    expect(page.nextCursor).not.toBeNull();
    await expect(pageRunRows(accountId, { from: T0 + 1 }, 2, page.nextCursor ?? undefined)).rejects.toMatchObject({
      code: 'INVALID_CURSOR',
    });
  });
});
