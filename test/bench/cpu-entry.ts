// The program whose instructions `cpu.ts` counts: the trigger handler, bundled as deployed, called
// in-process with the I/O stubbed at the SDK's network boundary (fake-aws.ts).
//   node cpu-trigger.mjs <warm-up> <warm> <cold>
// runs <warm-up> requests (alternately with and without cached records, so both paths are compiled),
// then <warm> requests that find the records cached (as in a warm Lambda instance), then <cold>
// requests that each start with empty record caches (webhook and key read with one BatchGet and
// parsed). Every request must answer 200.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from '../../functions/http/webhooks/trigger.ts';
import { db, tableName } from '../../shared/clients.ts';
import { type Account, accountCounterItems, accountItem } from '../../shared/db/entities/account.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { caches } from '../../shared/domain/records.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { newId } from '../../shared/ids.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { calls, fakeAws, sealFakeTable } from './fake-aws.ts';
import { setFlow } from './flows.ts';

const [warmUp = 0, warm = 0, cold = 0] = process.argv.slice(2, 5).map(Number);

await fakeAws();
// The bench data, made by the service's own create functions (written to the fake table).
const account: Account = { accountId: newId('acc'), name: 'Bench', plan: 'enterprise', createdAt: Date.now() };
for (const Item of [accountItem(account), ...accountCounterItems(account)])
  await db().send(new PutCommand({ TableName: tableName(), Item }));
const admin = { kind: 'session', accountId: account.accountId, userId: newId('usr'), role: 'admin', sessionId: '' } as const;
const key = await createKey(admin, { name: 'trigger', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
const workflow = await createWorkflow(admin, { name: 'one step', definition: setFlow(1), recovery: false, editors: [] });
const webhook = await createWebhook(admin, CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'bench', apiKeyId: key.id }));

sealFakeTable();

// A virtual clock, 1 ms per request: the record caches (5 s) never expire between requests however
// slowly callgrind runs them, and the rate-limit window stays one minute.
const realNow = Date.now;
let clock = realNow();
Date.now = () => clock;

const trigger = async (i: number, emptyCaches: boolean) => {
  clock += 1;
  if (emptyCaches) for (const c of Object.values(caches)) c.clear();
  const event = apiEvent({
    method: 'POST',
    path: `/api/webhooks/${webhook.webhookId}/trigger`,
    params: { webhookId: webhook.webhookId },
    headers: { authorization: `Bearer ${key.token}` },
    body: { n: i, source: 'bench' },
  });
  const res = (await handler(event as never, lambdaContext())) as { statusCode: number; body?: string };
  if (res.statusCode !== 200) throw new Error(`trigger answered ${res.statusCode}: ${res.body}`);
};

const phase = async (n: number, emptyCaches: (i: number) => boolean) => {
  const before = { ...calls };
  for (let i = 0; i < n; i++) await trigger(i, emptyCaches(i));
  return Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, (v - (before[k] ?? 0)) / Math.max(1, n)]));
};
await phase(warmUp, (i) => i % 2 === 0);
const callsPerRequest = { warm: await phase(warm, () => false), cold: await phase(cold, () => true) };
process.stderr.write(`cpu-entry: ${JSON.stringify({ warmUp, warm, cold, callsPerRequest })}\n`);
