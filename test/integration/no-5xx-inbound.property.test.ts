import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as replayHandler } from '../../functions/http/webhooks/replay.ts';
import { handler as requestHandler } from '../../functions/http/webhooks/request.ts';
import { handler as requestsHandler } from '../../functions/http/webhooks/requests.ts';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { check, good, mutated, printable, request, runsWith, text, tokenBody, ulidish } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Whatever a client sends the inbound log's routes (docs/webhooks.md "Why was my request refused?") —
 * webhook and request ids of its own, another account's or none, cursors, limits, Idempotency-Keys,
 * credentials — the answer is a 2xx or a 4xx, never a 5xx, and a page never holds another webhook's request.
 */

const RUNS = { numRuns: 60 } as const;

let admin: string;
let member: string;
let stranger: string;
let webhookId: string;
let otherWebhookId: string;
const requestIds: string[] = [];
let cursor: string;

beforeAll(async () => {
  const [a, b] = await Promise.all([givenAccount({ plan: 'enterprise' }), givenAccount()]);
  const def = { steps: [{ id: 'only', type: 'set', values: {} }] };
  const wf = await createWorkflow(adminSession(a), { name: 'wf', definition: def, recovery: false, editors: [] } as never);
  const otherWf = await createWorkflow(adminSession(b), { name: 'wf', definition: def, recovery: false, editors: [] } as never);
  webhookId = (
    await createWebhook(adminSession(a), {
      workflowId: wf.workflowId,
      name: 'h',
      secretKey: 's'.repeat(20),
      allowedSourceIps: [],
      enabled: false,
    })
  ).webhookId;
  otherWebhookId = (
    await createWebhook(adminSession(b), {
      workflowId: otherWf.workflowId,
      name: 'h',
      authMode: 'open',
      allowedSourceIps: [],
      enabled: true,
    })
  ).webhookId;
  [admin, member, stranger] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email), sessionOf(b.admin.email)]);
  // A refused request of each webhook (signature; disabled) and an accepted one of the other account's.
  for (const [id, headers] of [
    [webhookId, { 'x-webhook-signature': 'sha256=00' }],
    [otherWebhookId, {}],
  ] as const) {
    const res = await invoke(
      triggerHandler,
      apiEvent({
        method: 'POST',
        path: `/api/webhooks/${id}/trigger`,
        params: { webhookId: id },
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"a":1}',
      }),
    );
    expect(res.status).toBeLessThan(500);
  }
  const page = await invoke(
    requestsHandler,
    apiEvent({ path: `/api/webhooks/${webhookId}/requests`, headers: bearer(admin), params: { id: webhookId }, query: { limit: '1' } }),
  );
  requestIds.push(...page.json.items.map((i: { requestId: string }) => i.requestId));
  cursor = page.json.nextCursor ?? 'none';
  const other = await invoke(
    requestsHandler,
    apiEvent({ path: `/api/webhooks/${otherWebhookId}/requests`, headers: bearer(stranger), params: { id: otherWebhookId } }),
  );
  requestIds.push(...other.json.items.map((i: { requestId: string }) => i.requestId));
  expect(requestIds.length).toBeGreaterThanOrEqual(2);
});

const auth = () =>
  fc.option(
    fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(`Bearer ${admin}`, `Bearer ${member}`, `Bearer ${stranger}`) },
      text,
      tokenBody.map((t) => `Bearer dys_${t}`),
      mutated(admin).map((t) => `Bearer ${t}`),
    ),
    { nil: undefined, freq: 8 },
  );
const webhookIds = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(webhookId, otherWebhookId) },
    ulidish.map((u) => `wh_${u}`),
    text,
  );
const requestIdOf = () =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...requestIds) },
    ulidish.map((u) => `rq_${u}`),
    ulidish.map((u) => `ex_${u}`),
    fc.constantFrom(...requestIds).chain((id) => mutated(id)),
    text,
  );
const query = () =>
  fc.option(
    fc.record(
      {
        limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), text),
        cursor: fc.oneof(fc.constant(cursor), mutated(cursor), text, fc.constant('x'.repeat(5000))),
      },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  );

describe("no request makes the inbound log's routes answer 5xx", () => {
  it('GET /api/webhooks/{id}/requests', async () => {
    let pages = 0;
    await fc.assert(
      fc.asyncProperty(
        request(auth(), fc.constant({ isBase64Encoded: false }), { params: webhookIds().map((id) => ({ id })), query: query() }),
        async (req) => {
          const res = await check(requestsHandler, 'GET', '/api/webhooks/{id}/requests', req, [200, 400, 401, 404, 429]);
          if (res.status !== 200) return;
          pages++;
          const mine = req.params?.id === webhookId;
          for (const i of res.json.items) expect(requestIds.slice(mine ? 0 : 1)).toContain(i.requestId);
        },
      ),
      runsWith(
        RUNS,
        good(`Bearer ${admin}`, { params: { id: webhookId } }),
        good(`Bearer ${admin}`, { params: { id: webhookId }, query: { cursor } }),
      ),
    );
    expect(pages).toBeGreaterThan(0);
  });

  it('GET /api/webhooks/{id}/requests/{requestId}', async () => {
    await fc.assert(
      fc.asyncProperty(
        request(auth(), fc.constant({ isBase64Encoded: false }), {
          params: fc.record({ id: webhookIds(), requestId: requestIdOf() }),
        }),
        async (req) => {
          await check(requestHandler, 'GET', '/api/webhooks/{id}/requests/{requestId}', req, [200, 400, 401, 404, 429]);
        },
      ),
      runsWith(RUNS, good(`Bearer ${admin}`, { params: { id: webhookId, requestId: requestIds[0] as string } })),
    );
  });

  it('POST /api/webhooks/{id}/requests/{requestId}/replay', async () => {
    await fc.assert(
      fc.asyncProperty(
        request(auth(), fc.constant({ isBase64Encoded: false }), {
          params: fc.record({ id: webhookIds(), requestId: requestIdOf() }),
          extraHeaders: fc.option(fc.record({ 'idempotency-key': fc.oneof(printable, text) }), { nil: {} }).map((h) => h ?? {}),
        }),
        async (req) => {
          await check(replayHandler, 'POST', '/api/webhooks/{id}/requests/{requestId}/replay', req, [202, 400, 401, 403, 404, 409, 429]);
        },
      ),
      runsWith(RUNS, {
        ...good(`Bearer ${admin}`, { params: { id: webhookId, requestId: requestIds[0] as string } }),
        headers: { authorization: `Bearer ${admin}`, 'idempotency-key': 'k' },
      }),
    );
  });
});
