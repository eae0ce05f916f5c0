import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler as scheduleCreateHandler } from '../../functions/http/schedules/create.ts';
import { handler as scheduleUpdateHandler } from '../../functions/http/schedules/update.ts';
import { handler as webhookCreateHandler } from '../../functions/http/webhooks/create.ts';
import { handler as webhookUpdateHandler } from '../../functions/http/webhooks/update.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { getSchedule } from '../../shared/db/entities/schedule.ts';
import { getWebhook } from '../../shared/db/entities/webhook.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// Updates of one webhook or schedule at once (issue 41, finding 12): each was read, then written on
// the condition that it had not changed; the losers were told 404 *_NOT_FOUND although it exists.
// They answer 409 CONFLICT (as a workflow does), and only the winners' changes are stored and audited.

const DEFINITION = WorkflowDefinition.parse({ steps: [{ id: 'a', type: 'set', values: { x: 1 } }] });
const AT_ONCE = 8;

async function given() {
  const a = await givenAccount({ plan: 'team' });
  const session = await sessionOf(a.admin.email);
  const workflow = await createWorkflow(a.admin, {
    name: `wf-${randomBytes(3).toString('hex')}`,
    definition: DEFINITION,
    recovery: false,
    editors: [],
  });
  return { ...a, session, workflow };
}

/** Every answer is the winner's 200 or a loser's 409 CONFLICT (a problem+json); at least one of each. */
function expectWinnersAndConflicts(answers: Awaited<ReturnType<typeof invoke>>[]) {
  for (const res of answers) {
    if (res.status === 200) continue;
    expectProblem(res, 409, 'CONFLICT');
  }
  const won = answers.filter((r) => r.status === 200);
  expect(won.length, answers.map((r) => `${r.status} ${r.body?.slice(0, 120)}`).join('\n')).toBeGreaterThan(0);
  expect(won.length).toBeLessThan(answers.length);
  return won;
}

describe('an update that loses its race', () => {
  it('answers 409 CONFLICT for a webhook, never 404', async () => {
    const t = await given();
    const created = await invoke(
      webhookCreateHandler,
      apiEvent({
        method: 'POST',
        path: '/api/webhooks',
        headers: bearer(t.session),
        body: { workflowId: t.workflow.workflowId, name: 'w0', authMode: 'open' },
      }),
    );
    expect(created.status, created.body).toBe(201);
    const id = created.json.id as string;
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        invoke(
          webhookUpdateHandler,
          apiEvent({ method: 'PUT', path: `/api/webhooks/${id}`, headers: bearer(t.session), params: { id }, body: { name: `w${i + 1}` } }),
        ),
      ),
    );
    const won = expectWinnersAndConflicts(answers);
    // What is stored is a winner's, and each winner's change (only) is in the audit log.
    expect(won.map((r) => r.json.name)).toContain((await getWebhook(id, true))?.name);
    const entries = await listAuditEntries({ accountId: t.account.accountId, action: 'webhook.updated', objectId: id }, 100);
    expect(entries.items).toHaveLength(won.length);
  });

  it('answers 409 CONFLICT for a schedule, never 404', async () => {
    const t = await given();
    const created = await invoke(
      scheduleCreateHandler,
      apiEvent({
        method: 'POST',
        path: `/api/workflows/${t.workflow.workflowId}/schedules`,
        headers: bearer(t.session),
        params: { id: t.workflow.workflowId },
        body: { name: 's0', expression: 'cron(0 9 * * ? *)', timezone: 'UTC' },
      }),
    );
    expect(created.status, created.body).toBe(201);
    const id = created.json.id as string;
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, (_, i) =>
        invoke(
          scheduleUpdateHandler,
          apiEvent({
            method: 'PUT',
            path: `/api/schedules/${id}`,
            headers: bearer(t.session),
            params: { scheduleId: id },
            body: { name: `s${i + 1}` },
          }),
        ),
      ),
    );
    const won = expectWinnersAndConflicts(answers);
    expect(won.map((r) => r.json.name)).toContain((await getSchedule(t.account.accountId, id, true))?.name);
    const entries = await listAuditEntries({ accountId: t.account.accountId, action: 'schedule.updated', objectId: id }, 100);
    expect(entries.items).toHaveLength(won.length);
  });
});
