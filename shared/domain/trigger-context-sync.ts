import { listWebhooks, setTriggerContext } from '../db/entities/webhook.ts';
import type { WorkflowDefinition } from '../engine/definition.ts';
import { findExpressions } from '../engine/expressions.ts';
import { caches } from './records.ts';

/** Does any expression of the definition read `$trigger`? */
export const readsTrigger = (def: WorkflowDefinition): boolean =>
  findExpressions(def, [], 80).some(({ source }) => /\$trigger\b/.test(source));

/** After a workflow's definition changed: its webhooks say whether it reads `$trigger` (only those that change are written). */
export async function syncTriggerContext(accountId: string, workflowId: string, def: WorkflowDefinition): Promise<void> {
  const reads = readsTrigger(def);
  const bound = (await listWebhooks(accountId)).filter((w) => w.workflowId === workflowId && Boolean(w.triggerContext) !== reads);
  await Promise.all(
    bound.map(async (w) => {
      await setTriggerContext(w.webhookId, reads);
      caches.webhooks.delete(w.webhookId);
    }),
  );
}
