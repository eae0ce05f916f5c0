import { createHmac, randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { handler as legacyHandler } from '../../functions/http/webhooks/trigger-legacy.ts';
import { listExecutions } from '../../shared/db/entities/execution.ts';
import { readStats, type SignatureScheme } from '../../shared/db/entities/webhook.ts';
import { createWebhook, updateWebhook, webhookView } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody, UpdateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';

/**
 * GitHub, Stripe, Slack and Standard Webhooks senders pointed straight at a webhook, through the
 * trigger's whole stack: each signs the way it documents, its retries of one delivery start one run,
 * its handshakes start none, and a refusal is counted in the webhook's stats like any other.
 */

beforeAll(() => useOwnQueues());

const SECRETS: Record<SignatureScheme, string> = {
  'legacy-hmac': 'legacy-secret-0123456789',
  'standard-webhooks': `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
  github: "It's a Secret to Everybody",
  stripe: 'whsec_stripe_endpoint_secret_0123',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
};
const hex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');
const unix = (ms = Date.now()) => Math.floor(ms / 1000);

/** The headers each sender puts on `body`, signed at `at` (ms), for delivery `id`. */
const signed: Record<SignatureScheme, (body: string, id: string, at: number) => Record<string, string>> = {
  'legacy-hmac': (body) => ({ 'x-webhook-signature': `sha256=${hex(SECRETS['legacy-hmac'], body)}` }),
  'standard-webhooks': (body, id, at) => ({
    'webhook-id': id,
    'webhook-timestamp': String(unix(at)),
    'webhook-signature': new StandardWebhook(SECRETS['standard-webhooks']).sign(id, new Date(unix(at) * 1000), body),
  }),
  github: (body, id) => ({
    'x-hub-signature-256': `sha256=${hex(SECRETS.github, body)}`,
    'x-github-delivery': id,
    'x-github-event': 'push',
  }),
  stripe: (body, _id, at) => ({ 'stripe-signature': `t=${unix(at)},v1=${hex(SECRETS.stripe, `${unix(at)}.${body}`)}` }),
  slack: (body, _id, at) => ({
    'x-slack-request-timestamp': String(unix(at)),
    'x-slack-signature': `v0=${hex(SECRETS.slack, `v0:${unix(at)}:${body}`)}`,
  }),
};
/** A body of each sender's shape, carrying the delivery id where the sender puts it in the body. */
const bodyOf = (scheme: SignatureScheme, id: string) =>
  JSON.stringify(
    scheme === 'stripe'
      ? { id, type: 'charge.succeeded' }
      : scheme === 'slack'
        ? { type: 'event_callback', event_id: id }
        : { id, action: 'opened' },
  );

async function givenSender(scheme: SignatureScheme) {
  const a = await givenAccount({ plan: 'enterprise' });
  const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const workflow = await createWorkflow(actor, {
    name: scheme,
    definition: WorkflowDefinition.parse({ steps: [{ id: 'mark', type: 'set', values: { marked: true } }] }),
    recovery: false,
    editors: [],
  });
  const webhook = await createWebhook(
    actor,
    CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: scheme, secretKey: SECRETS[scheme], signatureScheme: scheme }),
  );
  const post = async (body: string, headers: Record<string, string>, handler = triggerHandler) => {
    const res = await invoke(
      handler,
      apiEvent({
        method: 'POST',
        params: { webhookId: webhook.webhookId },
        headers: { 'content-type': 'application/json', ...headers },
        body,
      }),
    );
    return { status: res.status, code: res.json?.code as string | undefined, json: res.json, replayed: res.headers['idempotent-replayed'] };
  };
  const deliver = (id: string, at = Date.now(), handler = triggerHandler) => {
    const body = bodyOf(scheme, id);
    return post(body, signed[scheme](body, id, at), handler);
  };
  const runs = async () => (await listExecutions(a.account.accountId, { workflowId: workflow.workflowId }, 100)).items.length;
  const stats = () => readStats(webhook.webhookId, Date.now());
  return { actor, webhook, post, deliver, runs, stats };
}

const TIMESTAMPED: SignatureScheme[] = ['standard-webhooks', 'stripe', 'slack'];

describe.each(['standard-webhooks', 'github', 'stripe', 'slack'] as const)('%s', (scheme) => {
  it('starts a run for a signed delivery, and one run only for its retries (re-signed later), on both paths', async () => {
    const s = await givenSender(scheme);
    expect(webhookView(s.webhook)).toMatchObject({ authMode: 'hmac', signatureScheme: scheme, hasSecretKey: true });
    const id = `dlv-${randomUUID()}`;
    const first = await s.deliver(id);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.executionId).toMatch(/^ex_/);
    const retry = await s.deliver(id, Date.now() + 2_000);
    expect(retry).toMatchObject({ status: 200, replayed: 'true', json: { executionId: first.json.executionId } });
    const legacyRetry = await s.deliver(id, Date.now(), legacyHandler);
    expect(legacyRetry).toMatchObject({ status: 200, replayed: 'true', json: { executionId: first.json.executionId } });
    const other = await s.deliver(`dlv-${randomUUID()}`);
    expect(other.status).toBe(200);
    expect(other.json.executionId).not.toBe(first.json.executionId);
    expect(await s.runs()).toBe(2);
  });

  it('dedupes on the signed delivery id only: one captured delivery replayed with 5 different Idempotency-Keys starts one run', async () => {
    const s = await givenSender(scheme);
    const id = `dlv-${randomUUID()}`;
    const body = bodyOf(scheme, id);
    const headers = signed[scheme](body, id, Date.now());
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await s.post(body, { ...headers, 'idempotency-key': `made-up-${i}-${randomUUID()}` }));
    for (const a of answers) expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(new Set(answers.map((a) => a.json.executionId)).size).toBe(1);
    expect(answers.slice(1).every((a) => a.replayed === 'true')).toBe(true);
    expect(await s.runs()).toBe(1);
  });

  it('refuses a wrong signature, and another scheme’s, with 401 INVALID_SIGNATURE, counted in the stats', async () => {
    const s = await givenSender(scheme);
    const body = bodyOf(scheme, 'x');
    const headers = signed[scheme](body, 'x', Date.now());
    expect(await s.post(body.replace('x', 'y'), headers)).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
    expect(await s.post(body, signed['legacy-hmac'](body, 'x', Date.now()))).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
    expect(await s.post(body, {}, legacyHandler)).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
    expect(await s.runs()).toBe(0);
    expect(await s.stats()).toMatchObject({ total: 3, accepted: 0, rejected: { 401: 3 } });
  });
});

describe.each(TIMESTAMPED)('%s timestamps', (scheme) => {
  it('refuses a delivery signed more than 5 minutes ago or ahead with 401 SIGNATURE_EXPIRED, and starts nothing', async () => {
    const s = await givenSender(scheme);
    expect(await s.deliver('stale', Date.now() - 6 * 60_000)).toMatchObject({ status: 401, code: 'SIGNATURE_EXPIRED' });
    expect(await s.deliver('future', Date.now() + 6 * 60_000)).toMatchObject({ status: 401, code: 'SIGNATURE_EXPIRED' });
    expect(await s.deliver('recent', Date.now() - 4 * 60_000)).toMatchObject({ status: 200 });
    expect(await s.runs()).toBe(1);
  });
});

describe('handshakes', () => {
  it("answers Slack's signed url_verification with its challenge and starts no run; unsigned, it is refused", async () => {
    const s = await givenSender('slack');
    const body = JSON.stringify({
      token: 'Jhj5dZrVaK7ZwHHjRyZWjbDl',
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
      type: 'url_verification',
    });
    const res = await s.post(body, signed.slack(body, '', Date.now()));
    expect(res).toMatchObject({ status: 200, json: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } });
    expect(await s.post(body, {})).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
    expect(await s.runs()).toBe(0);
  });

  it("answers GitHub's signed ping with 200 and starts no run; a push without X-GitHub-Delivery starts one each time", async () => {
    const s = await givenSender('github');
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const headers = { 'x-hub-signature-256': `sha256=${hex(SECRETS.github, body)}` };
    expect(await s.post(body, { ...headers, 'x-github-event': 'ping' })).toMatchObject({ status: 200, json: { ok: true, event: 'ping' } });
    expect(await s.runs()).toBe(0);
    expect(await s.post(body, { ...headers, 'x-github-event': 'push' })).toMatchObject({ status: 200 });
    expect(await s.post(body, { ...headers, 'x-github-event': 'push' })).toMatchObject({ status: 200 });
    expect(await s.runs()).toBe(2);
  });
});

describe('settings', () => {
  it('a standard-webhooks webhook needs a whsec_ secret, on create and when an update changes either', async () => {
    const s = await givenSender('github');
    const body = {
      workflowId: s.webhook.workflowId,
      name: 'sw',
      secretKey: 'not-a-whsec-secret-0123',
      signatureScheme: 'standard-webhooks',
    };
    await expect(createWebhook(s.actor, CreateWebhookBody.parse(body))).rejects.toMatchObject({
      kind: 'invalid',
      code: 'VALIDATION_FAILED',
    });
    await expect(
      updateWebhook(s.actor, s.webhook.webhookId, UpdateWebhookBody.parse({ signatureScheme: 'standard-webhooks' })),
    ).rejects.toMatchObject({
      kind: 'invalid',
      code: 'VALIDATION_FAILED',
    });
    const updated = await updateWebhook(
      s.actor,
      s.webhook.webhookId,
      UpdateWebhookBody.parse({ signatureScheme: 'standard-webhooks', secretKey: SECRETS['standard-webhooks'] }),
    );
    expect(webhookView(updated)).toMatchObject({ signatureScheme: 'standard-webhooks' });
    expect(CreateWebhookBody.safeParse({ ...body, signatureScheme: 'svix' }).success).toBe(false);
  });

  it('a webhook without a scheme is legacy-hmac; key-bound and open webhooks show none', async () => {
    const s = await givenSender('github');
    const legacy = await createWebhook(
      s.actor,
      CreateWebhookBody.parse({ workflowId: s.webhook.workflowId, name: 'l', secretKey: SECRETS['legacy-hmac'] }),
    );
    const open = await createWebhook(s.actor, CreateWebhookBody.parse({ workflowId: s.webhook.workflowId, name: 'o', authMode: 'open' }));
    expect(webhookView(legacy).signatureScheme).toBe('legacy-hmac');
    expect(webhookView(open).signatureScheme).toBeNull();
  });
});
