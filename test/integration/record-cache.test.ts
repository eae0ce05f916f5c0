import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { db, tableName } from '../../shared/clients.ts';
import { authenticateKey, createKey, revokeKey } from '../../shared/domain/keys.ts';
import { RECORD_TTL_MS } from '../../shared/db/retention.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';

/**
 * Keys and webhooks are cached per function instance (shared/domain/records.ts). A change made by
 * another instance (here: a direct table write, which no cache hears of) takes effect within 5 s;
 * one made through this instance takes effect at once. Time is the cache's own clock (`now`), not sleeps.
 */

let a: Awaited<ReturnType<typeof givenAccount>>;
const definition = WorkflowDefinition.parse({ steps: [{ id: 'mark', type: 'set', values: { marked: true } }] });
beforeAll(async () => {
  await useOwnQueues();
  a = await givenAccount({ plan: 'enterprise' });
});

const admin = () => ({ kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' }) as const;
const newKey = () => createKey(admin(), { name: 'cached', scopes: ['WEBHOOK_TRIGGER', 'WORKFLOW_READ'], validityDays: 30 });

/** What another instance's revocation or edit does to the table: no cache of this process is told. */
const setFields = (Key: Record<string, string>, fields: Record<string, unknown>) =>
  db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key,
      UpdateExpression: `SET ${Object.keys(fields)
        .map((f) => `${f} = :${f}`)
        .join(', ')}`,
      ExpressionAttributeValues: Object.fromEntries(Object.entries(fields).map(([f, v]) => [`:${f}`, v])),
    }),
  );

async function hookBoundTo(keyId: string) {
  const workflow = await createWorkflow(admin(), { name: 'cached', definition, recovery: false, editors: [] });
  return createWebhook(admin(), CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'cached', apiKeyId: keyId }));
}

/** The trigger's answer (status and code) as the clock reads `now`. */
async function trigger(webhookId: string, token: string, now: number) {
  vi.useFakeTimers({ toFake: ['Date'], now });
  try {
    const event = apiEvent({ method: 'POST', headers: { authorization: `Bearer ${token}` }, params: { webhookId }, body: {} });
    const res = await invoke(triggerHandler, event);
    return { status: res.status, code: res.json?.code };
  } finally {
    vi.useRealTimers();
  }
}
const accepted = { status: 200, code: undefined };

describe('cached keys and webhooks', () => {
  it('keeps records for at most 5 s', () => {
    expect(RECORD_TTL_MS).toBeLessThanOrEqual(5_000);
  });

  it('a key revoked elsewhere is refused by the trigger and the open-platform routes within 5 s', async () => {
    const key = await newKey();
    const webhook = await hookBoundTo(key.id);
    const t0 = Date.now();
    expect(await trigger(webhook.webhookId, key.token, t0)).toEqual(accepted);
    await expect(authenticateKey(key.token, t0)).resolves.toMatchObject({ keyId: key.id });

    await setFields({ PK: `KEY#${key.id}`, SK: 'KEY' }, { revokedAt: t0 });

    const expired = t0 + RECORD_TTL_MS;
    expect(await trigger(webhook.webhookId, key.token, expired)).toEqual({ status: 401, code: 'INVALID_API_KEY' });
    await expect(authenticateKey(key.token, expired)).rejects.toMatchObject({ kind: 'unauthorized', code: 'INVALID_API_KEY' });
  });

  it('a webhook disabled elsewhere is refused within 5 s', async () => {
    const key = await newKey();
    const webhook = await hookBoundTo(key.id);
    const t0 = Date.now();
    expect(await trigger(webhook.webhookId, key.token, t0)).toEqual(accepted);
    await setFields({ PK: `WH#${webhook.webhookId}`, SK: 'WEBHOOK' }, { enabled: false });
    expect(await trigger(webhook.webhookId, key.token, t0 + RECORD_TTL_MS)).toEqual({ status: 409, code: 'WEBHOOK_DISABLED' });
  });

  it('a key revoked through this instance is refused at once', async () => {
    const key = await newKey();
    const webhook = await hookBoundTo(key.id);
    const t0 = Date.now();
    await expect(authenticateKey(key.token, t0)).resolves.toMatchObject({ keyId: key.id });
    expect(await trigger(webhook.webhookId, key.token, t0)).toEqual(accepted);
    await revokeKey(admin(), key.id, t0);
    await expect(authenticateKey(key.token, t0 + 1)).rejects.toMatchObject({ kind: 'unauthorized', code: 'INVALID_API_KEY' });
    expect(await trigger(webhook.webhookId, key.token, t0 + 1)).toEqual({ status: 401, code: 'INVALID_API_KEY' });
  });
});
