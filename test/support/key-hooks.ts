import { expect } from 'vitest';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import type { Plan } from '../../shared/config.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { adminSession, givenAccount } from './fixtures.ts';
import { apiEvent, invoke } from './http.ts';

/**
 * A new account with a trigger key, and `hook(definition)`: a workflow of that definition with a webhook
 * bound to the key, and its `trigger(body, headers)`, which calls the webhook trigger's handler as that
 * function (its grants apply), expects 200 and returns the answer.
 */
export async function givenKeyHooks(plan: Plan = 'enterprise') {
  const a = await givenAccount({ plan });
  const actor = adminSession(a);
  const key = await createKey(actor, { name: 'hook', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const hook = async (definition: object) => {
    const workflow = await createWorkflow(actor, {
      name: 'hook',
      definition: WorkflowDefinition.parse(definition),
      recovery: false,
      editors: [],
    });
    const webhook = await createWebhook(
      actor,
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'hook', apiKeyId: key.id }),
    );
    const trigger = async (body: object = {}, headers: Record<string, string> = {}) => {
      const res = await invoke(
        triggerHandler,
        apiEvent({
          method: 'POST',
          path: `/api/webhooks/${webhook.webhookId}/trigger`,
          params: { webhookId: webhook.webhookId },
          headers: { authorization: `Bearer ${key.token}`, 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        }),
      );
      expect(res.status, res.body).toBe(200);
      return res.json as { executionId: string; status: string };
    };
    return { workflow, webhook, trigger };
  };
  return { a, key, hook };
}
