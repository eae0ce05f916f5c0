import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as create } from '../../functions/http/console/webhooks/create.ts';
import { handler as action } from '../../functions/http/console/webhooks/action.ts';
import { handler as pageOf } from '../../functions/http/console/webhooks/page.ts';
import { handler as detail } from '../../functions/http/console/webhooks/webhook.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { newFormId } from '../../shared/domain/form-once.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { sourceIp, text } from '../support/properties.ts';

/**
 * The webhook forms (create, edit, enable, disable, delete) with whatever a browser can send in their
 * fields — auth choices, key ids, secrets, schemes, mapping rows, allowlist lines, one-time values —
 * answer a page or a redirect, never a 5xx; and whatever they refuse (4xx) leaves the webhooks as they were.
 */

type Answer = { statusCode: number; headers?: Record<string, string> };
type Handler = (e: ReturnType<typeof apiEvent>, c: never) => Promise<Answer>;

let session: string;
let other: string;
let workflowId: string;
let webhookId: string;
let otherWebhookId: string;
let keyId: string;

beforeAll(async () => {
  const [a, b] = await Promise.all([givenAccount({ plan: 'enterprise' }), givenAccount()]);
  const def = { steps: [{ id: 'only', type: 'set', values: {} }] };
  const wf = await createWorkflow(adminSession(a), { name: 'wf', definition: def, recovery: false, editors: [] } as never);
  const otherWf = await createWorkflow(adminSession(b), { name: 'wf', definition: def, recovery: false, editors: [] } as never);
  workflowId = wf.workflowId;
  keyId = a.adminKey.id;
  webhookId = (
    await createWebhook(adminSession(a), { workflowId, name: 'h', secretKey: 's'.repeat(20), allowedSourceIps: [], enabled: true })
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
  session = await sessionOf(a.admin.email);
  other = await sessionOf(b.admin.email);
});

const ip = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('10.0.0.300', '10.0.0.0/33', '127.1', '::1/129', ''), text);
const field = fc.oneof(
  fc.record({ k: fc.constant('auth'), v: fc.oneof(fc.constantFrom('api_key', 'hmac', 'sender', 'open', ''), text) }),
  fc.record({ k: fc.constant('apiKeyId'), v: fc.oneof(fc.constant('KEY'), fc.stringMatching(/^[0-9a-z]{26}$/), text) }),
  fc.record({
    k: fc.constantFrom('hmacSecret', 'senderSecret'),
    v: fc.oneof(fc.constant('x'.repeat(20)), fc.constant('whsec_'.concat('A'.repeat(40))), text),
  }),
  fc.record({
    k: fc.constant('signatureScheme'),
    v: fc.oneof(fc.constantFrom('github', 'stripe', 'slack', 'standard-webhooks', 'legacy-hmac'), text),
  }),
  fc.record({ k: fc.constant('openConfirm'), v: fc.oneof(fc.constant('yes'), text) }),
  fc.record({ k: fc.constantFrom('mapVar', 'mapField'), v: fc.oneof(fc.constantFrom('orderId', 'id', '1bad', ''), text) }),
  fc.record({ k: fc.constant('allowedSourceIps'), v: fc.array(ip, { maxLength: 5 }).map((l) => l.join('\n')) }),
  fc.record({ k: fc.constantFrom('name', 'workflowId', 'nonce'), v: fc.oneof(fc.constantFrom('WF', 'NONCE', ''), text) }),
  fc.record({ k: text, v: text }),
);
const forms = fc.record({
  fields: fc.array(field, { maxLength: 14 }),
  csrf: fc.constantFrom('valid', 'valid', 'valid', 'other', 'none'),
  cookie: fc.constantFrom('mine', 'mine', 'mine', 'other', 'none'),
  sourceIp,
});

type Form = typeof forms extends fc.Arbitrary<infer T> ? T : never;

function event(method: string, path: string, params: Record<string, string>, q: Form | undefined) {
  const body = new URLSearchParams();
  for (const { k, v } of q?.fields ?? []) body.append(k, v === 'KEY' ? keyId : v === 'WF' ? workflowId : v === 'NONCE' ? newFormId() : v);
  const token = q?.cookie === 'other' ? other : session;
  if (q?.csrf !== 'none') body.set('csrf', csrfToken(q?.csrf === 'other' ? other : token));
  const e = apiEvent({
    method,
    path,
    params,
    headers: method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' } : {},
    ...(method === 'POST' ? { body: body.toString() } : {}),
    sourceIp: q?.sourceIp ?? '203.0.113.9',
  });
  if (q?.cookie !== 'none') e.cookies = [`flowgate_session=${token}`];
  return e;
}

async function expectPage(h: Handler, e: ReturnType<typeof apiEvent>, what: string) {
  const res = await h(e, lambdaContext());
  expect(res.statusCode, what).toBeLessThan(500);
  if (res.statusCode >= 400) expect(res.headers?.['content-type'], what).toBe('text/html; charset=utf-8');
  return res;
}

const webhookState = async () => {
  const res = await (detail as Handler)(event('GET', `/console/webhooks/${webhookId}`, { id: webhookId }, undefined), lambdaContext());
  return res.statusCode;
};

describe('no form sent to a webhook page answers 5xx', () => {
  it('POST /console/webhooks (create)', async () => {
    await fc.assert(
      fc.asyncProperty(forms, async (q) => {
        await expectPage(create as Handler, event('POST', '/console/webhooks', {}, q), JSON.stringify(q).slice(0, 400));
      }),
      { numRuns: 120 },
    );
  });

  it('POST /console/webhooks/{id}/{action} (edit, enable, disable; delete on another account’s or an unknown id)', async () => {
    await fc.assert(
      fc.asyncProperty(
        forms,
        fc.constantFrom('edit', 'edit', 'enable', 'disable', 'delete', 'junk'),
        fc.constantFrom('mine', 'other', 'unknown', 'junk'),
        async (q, act, which) => {
          // Deleting is tried on ids that are not this account's only, so the webhook stays for the next runs
          // (the other account's session may delete its own: that one is then unknown).
          const id =
            which === 'mine' && act !== 'delete'
              ? webhookId
              : which === 'other'
                ? otherWebhookId
                : which === 'unknown'
                  ? `wh_${'0'.repeat(26)}`
                  : 'x<y>';
          const res = await expectPage(
            action as Handler,
            event('POST', `/console/webhooks/${encodeURIComponent(id)}/${act}`, { id, action: act }, q),
            `${act} ${which} ${JSON.stringify(q).slice(0, 400)}`,
          );
          // Only the sign-in page is where another account's or an unknown id leads.
          if (q.cookie === 'mine' && which !== 'mine' && res.statusCode === 303) expect(res.headers?.location).toMatch(/^\/console\/login/);
        },
      ),
      { numRuns: 150 },
    );
    expect(await webhookState()).toBe(200);
  });

  it('GET /console/webhooks/{id}/{page}', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('edit', 'delete', 'junk', ''),
        fc.constantFrom(webhookId, otherWebhookId, 'x', `wh_${'0'.repeat(26)}`),
        async (p, id) => {
          const res = await expectPage(
            pageOf as Handler,
            event('GET', `/console/webhooks/${id}/${p}`, { id, page: p }, undefined),
            `${p} ${id}`,
          );
          expect(res.statusCode).toBe(id === webhookId && (p === 'edit' || p === 'delete') ? 200 : 404);
        },
      ),
      { numRuns: 30 },
    );
  });
});
