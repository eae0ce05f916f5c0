import { ulid } from 'ulid';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as runsList } from '../../functions/http/console/runs/list.ts';
import { db } from '../../shared/clients.ts';
import { putNew } from '../../shared/db/batch.ts';
import { executionKey, executionListings } from '../../shared/db/entities/execution.ts';
import { listShards } from '../../shared/db/shards.ts';
import { FILTERED_WINDOWS } from '../../shared/domain/run-list.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * The DynamoDB calls of one view of the overview and of the runs list (what their handlers' comments
 * promise): counted at the client, by command, on DynamoDB Local. No Scan, ever.
 */

let token: string;
let workflowId: string;

beforeAll(async () => {
  const a = await givenAccount();
  token = await sessionOf(a.admin.email);
  workflowId = `wf_${ulid().toLowerCase()}`;
  const now = Date.now();
  await putNew(
    ['SUCCEEDED', 'FAILED', 'RUNNING'].map((status, i) => {
      const executionId = `ex_${ulid(now - i * 1000).toLowerCase()}`;
      return {
        ...executionKey(a.account.accountId, executionId),
        ...executionListings({ accountId: a.account.accountId, workflowId, executionId }),
        type: 'execution',
        workflowId,
        status,
        trigger: 'api',
        recovery: false,
        variables: '{}',
        outputs: '{}',
        steps: [],
        nextStep: 0,
        startedAt: now,
        updatedAt: now,
        ...(status === 'FAILED' ? { finishedAt: now, error: { code: 'X', message: 'y' } } : {}),
      };
    }),
  );
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** One page view: its status and its DynamoDB calls by command. */
async function view(handler: typeof runsList, path: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const send = vi.spyOn(db(), 'send');
  const event = { ...apiEvent({ method: 'GET', path, query, headers }), cookies: [`flowgate_session=${token}`] };
  const res = (await handler(event, lambdaContext())) as { statusCode: number };
  const calls: Record<string, number> = {};
  for (const [command] of send.mock.calls) calls[command.constructor.name] = (calls[command.constructor.name] ?? 0) + 1;
  send.mockRestore();
  return { status: res.statusCode, calls };
}

describe('DynamoDB calls per page view', () => {
  it('the runs list: the session (3 Gets), a Query per list shard, a BatchGet of the rows, a Query of the workflow choices', async () => {
    const shards = listShards();
    const page = await view(runsList, '/console/runs', { status: 'FAILED', from: new Date(Date.now() - 60_000).toISOString() });
    expect(page.status).toBe(200);
    // The workflow of the rows is gone (no item): its name is asked for once, by a BatchGet.
    expect(page.calls).toEqual({ GetCommand: 3, QueryCommand: shards + 1, BatchGetCommand: 2 });
    // The live refresh: the list alone, the names by one BatchGet instead of the choices' Query.
    const refresh = await view(runsList, '/console/runs', {}, { 'hx-request': 'true' });
    expect(refresh.status).toBe(200);
    expect(refresh.calls).toEqual({ GetCommand: 3, QueryCommand: shards, BatchGetCommand: 2 });
  });

  it('the runs list with a wrong filter or cursor: no run read, the form and the choices (400)', async () => {
    for (const query of [{ status: 'NOPE' }, { from: 'yesterday' }, { cursor: 'not-a-cursor' }] as Record<string, string>[]) {
      const page = await view(runsList, '/console/runs', query);
      expect(page.status, JSON.stringify(query)).toBe(400);
      expect(page.calls, JSON.stringify(query)).toEqual({ GetCommand: 3, QueryCommand: 1 });
    }
  });

  it('the runs list filtered by status: windows until the page is full, FILTERED_WINDOWS at most', async () => {
    // Three runs: the first window is the listing's end, so one window is read (the bound, 3 windows of
    // LIST_SHARDS Queries and a BatchGet each, is counted in test/integration/run-rows.test.ts).
    const page = await view(runsList, '/console/runs', { status: 'SUCCEEDED' });
    expect(page.status).toBe(200);
    expect(page.calls).toEqual({ GetCommand: 3, QueryCommand: listShards() + 1, BatchGetCommand: 2 });
    expect(FILTERED_WINDOWS * (listShards() + 1)).toBe(15);
  });

  it('the overview: the session, the hour counts (one Query), the failed runs (a Query per list shard, a BatchGet), the pending approvals (a Query per status shard), the names', async () => {
    const page = await view(overview, '/console');
    expect(page.status).toBe(200);
    // No approval pending: their BatchGet is not made. The 7-day span reads the same (its hours are one Query too).
    const calls = { GetCommand: 3, QueryCommand: 1 + listShards() + Math.max(16, listShards()) + 1, BatchGetCommand: 2 };
    expect(page.calls).toEqual(calls);
    expect((await view(overview, '/console', { span: '7d' })).calls).toEqual(calls);
  });
});
