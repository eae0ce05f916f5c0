// How the heat model's scenarios drive the service in-process on the emulators: triggers through the
// webhook route's handler, the runs worker's handler on its queue's messages in batches of up to 10 (the
// batch size on AWS), approvals and callbacks through their routes. Reads that only check progress are
// made outside the recording (`unrecorded`).
import { createServer } from 'node:http';
import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { getExecution } from '../../shared/db/entities/execution.ts';
import { keyRead, readThrough, userRead, webhookRead } from '../../shared/domain/records.ts';
import { currentWorkflow, forgetWorkflow } from '../../shared/engine/versions.ts';
import { takeRunMessages } from '../support/engine.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { flushCounts } from '../../shared/db/counters.ts';
import { takeAccountBudget } from '../../shared/domain/rate-limit.ts';
import { report as reportThroughRoute, runBatch } from './drive.ts';
import { HEAT_COUNTERS } from './heat.ts';
import { type Access, recordFlushesApart, unrecorded } from './heat-record.ts';
import { clearCaches, triggerRequest } from './scenarios.ts';

/** A webhook bound to a key, on a workflow (what `hookFor` in scenarios.ts makes). */
export type Hook = {
  key: { id: string; token: string };
  workflow: { workflowId: string };
  webhook: { webhookId: string; accountId: string };
};
/** Who decides approvals: an admin's key. */
export type Admin = { accountId: string; userId: string; keyId: string; token: string };

/**
 * What an HTTP function's instance writes when it flushes its counts (`shared/db/counters.ts`), per
 * function: an instance writes its counts at most once a second, whatever its requests, so the model
 * projects these per instance, not per request. Each request driven here is followed by a flush, and
 * what its counts wrote (in its handler, when the last flush was a second old, or after it) is kept
 * apart from the work, one list per request that wrote some.
 */
export const httpFlushes = new Map<string, Access[][]>();
async function viaHttp<T>(fn: string, request: () => Promise<T>): Promise<T> {
  const { result, flushed } = await recordFlushesApart(async () => {
    const r = await request();
    await flushCounts();
    return r;
  });
  if (flushed.length) httpFlushes.set(fn, [...(httpFlushes.get(fn) ?? []), flushed]);
  return result;
}

/**
 * The rate window is the clock's minute (`rate-counters.ts`), an hour's counts the clock's hour: a
 * recording that crossed into the next would count a new window's first writes, by when it ran. A
 * warm-up with less than `MINUTE_LEFT_MS` of its minute left waits for the next (a recording takes a
 * few seconds).
 */
const MINUTE_LEFT_MS = 20_000;
async function minuteAhead() {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < MINUTE_LEFT_MS) await new Promise((r) => setTimeout(r, left + 100));
}

/**
 * A warm instance: the records and workflows read afresh into their caches (5 s), and every rate
 * counter of the accounts in its current window (on a busy service each counter starts its window once
 * a minute, not at the first request measured), as on a busy service.
 */
export async function warm(hooks: readonly Hook[], admins: readonly Admin[] = []) {
  await minuteAhead();
  clearCaches();
  for (const account of new Set([...hooks.map((h) => h.webhook.accountId), ...admins.map((a) => a.accountId)]))
    for (let i = 0; i <= HEAT_COUNTERS; i++) await takeAccountBudget(account);
  for (const h of hooks) {
    forgetWorkflow(h.webhook.accountId, h.workflow.workflowId);
    await readThrough([webhookRead(h.webhook.webhookId), keyRead(h.key.id)]);
    await currentWorkflow(h.webhook.accountId, h.workflow.workflowId);
  }
  for (const a of admins) await readThrough([keyRead(a.keyId), userRead(a.accountId, a.userId)]);
}

/** `runs` triggers, round-robin over `hooks`: the runs' ids. */
export async function trigger(hooks: readonly Hook[], runs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < runs; i++) {
    const h = hooks[i % hooks.length] as Hook;
    const res = await viaHttp('webhook trigger', () => triggerRequest(h.webhook.webhookId, h.key.token));
    if (res.status !== 200) throw new Error(`trigger answered ${res.status}`);
    ids.push(res.json.executionId as string);
  }
  return ids;
}

/** The runs' statuses, read outside the recording. */
export const statuses = (accountOf: (id: string) => string, ids: readonly string[]) =>
  unrecorded(() => Promise.all(ids.map(async (id) => (await getExecution(accountOf(id), id))?.status ?? 'missing')));

/**
 * What the runs worker's batches flushed at their end (`counters.ts`: one write per item counted, per
 * batch), kept apart from the runs' work, which depends on how the messages fell into batches. Each
 * batch's writes are weighted by its messages per account in it, which makes the sum what a flush
 * per message would write whatever the batches were (an account's items are written once per batch
 * it has messages in, whatever their number); the model divides it by the messages an account has in
 * a full batch at its target (`heat.ts`). Only batches run inside a recording add to it.
 */
export const workerFlushes: Access[] = [];

/**
 * The runs worker's handler on the runs' messages, a batch of up to 10 at a time, until every run is in
 * one of `until` (checked outside the recording). Messages of other runs are dropped.
 */
export async function work(accountOf: (id: string) => string, ids: readonly string[], until: readonly string[]) {
  const wanted = new Set(ids);
  for (let round = 0; round < 200; round++) {
    const now = await statuses(accountOf, ids);
    if (now.every((s) => until.includes(s))) return;
    const batch = (await takeRunMessages()).filter((m) => wanted.has(m.executionId));
    if (batch.length === 0) continue;
    const accounts = new Set(batch.map((message) => message.accountId)).size;
    const { flushed, recording } = await recordFlushesApart(() => runBatch(batch, `h-${round}`));
    if (recording) workerFlushes.push(...flushed.map((a) => ({ ...a, units: (a.units * batch.length) / accounts })));
  }
  throw new Error(`runs not ${until.join('/')}: ${(await statuses(accountOf, ids)).join(',')}`);
}

/**
 * A refused trigger (401): the webhook's key with a wrong secret, from `ip`, with `body`; then its
 * instance's flush of its counts, kept apart (`viaHttp`, as 'refused trigger').
 */
export async function refuse(h: Hook, ip: string, body: object) {
  const wrong = `${h.key.token.slice(0, -1)}${h.key.token.endsWith('0') ? '1' : '0'}`;
  const res = await viaHttp('refused trigger', () => triggerRequest(h.webhook.webhookId, wrong, body, ip));
  if (res.status !== 401) throw new Error(`refused trigger answered ${res.status}`);
}

/** Approve through the approvals route (`POST /api/webhook-trigger/approval`) with an admin's key. */
export async function approve(admin: Admin, approvalId: string) {
  const res = await viaHttp('approvals route', () =>
    invoke(
      decideHandler as never,
      apiEvent({
        method: 'POST',
        path: '/api/webhook-trigger/approval',
        headers: bearer(admin.token),
        body: { approvalId, decision: 'approve' },
      }),
    ),
  );
  if (res.status !== 200) throw new Error(`approval answered ${res.status}`);
}

/** Report a callback's success through its route (`report` in drive.ts), then its instance's flush. */
export const report = (callback: { url: string; token: string }) => viaHttp('callbacks route', () => reportThroughRoute(callback));

/**
 * A listener on 127.0.0.1 for the runs' requests: `/ok/<run>` answers 200 at once, `/capture/<run>`
 * keeps the callback url and token the request carries.
 */
export async function listen() {
  const callbacks = new Map<string, { url: string; token: string }>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += String(c);
    });
    req.on('end', () => {
      const [, kind, id = ''] = (req.url ?? '').split('/');
      if (kind === 'capture') callbacks.set(id, JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    callbacks,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
