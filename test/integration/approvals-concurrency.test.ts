import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { handler as linkConfirmHandler } from '../../functions/http/approvals/link-confirm.ts';
import { handler as v1ApproveHandler } from '../../functions/http/v1/approvals/approve.ts';
import { handler as v1RejectHandler } from '../../functions/http/v1/approvals/reject.ts';
import { resetConfig } from '../../shared/config.ts';
import { getApproval, listAudit } from '../../shared/db/entities/approval.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { listAuditEntries } from '../../shared/db/entities/audit.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { pageFormValue } from '../../shared/http/page-form.ts';

/**
 * Exactly-once approval decisions under concurrency: 50 simultaneous decisions (approve and reject,
 * by two reviewers, through the spec's POST, the link's confirming POST and v1) on one approval give
 * exactly one 200 and 49 × 409; the run moves exactly once. Repeated for 20 approvals.
 */

const APPROVALS = 20;
const CONCURRENT = 50;

let stopWorkers: () => Promise<unknown>;
let a: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  // Before anything: 1,000+ metered calls in a minute stay under the account budget.
  await useOwnQueues({ RATE_LIMITS: JSON.stringify({ team: 100_000 }) });
  stopWorkers = startWorkers();
  a = await givenAccount();
});
afterAll(async () => {
  await stopWorkers?.();
  delete process.env.RATE_LIMITS;
  resetConfig();
});

const readRun = async (e: Pick<Execution, 'accountId' | 'executionId'>) => (await getExecution(e.accountId, e.executionId)) as Execution;
const eventTypes = async (e: Pick<Execution, 'accountId' | 'executionId'>) =>
  (await listEvents(e.accountId, e.executionId, 200)).items.map((ev) => ev.type);

type Attempt = { channel: 'post' | 'link' | 'v1'; decision: 'approve' | 'reject'; token: string };

/** One decision attempt, in-process through the route's real handler (the whole middleware stack). */
function attempt(approvalId: string, t: Attempt) {
  const auth = { authorization: `Bearer ${t.token}`, 'user-agent': `concurrency-${t.channel}` };
  if (t.channel === 'post') {
    return invoke(
      decideHandler as never,
      apiEvent({
        method: 'POST',
        path: '/api/webhook-trigger/approval',
        headers: auth,
        body: { approvalId, decision: t.decision === 'approve' ? 'APPROVE' : 'reject', comment: `${t.channel} ${t.decision}` },
      }),
    );
  }
  if (t.channel === 'link') {
    const path = `/api/webhook-trigger/approval/${approvalId}/${t.decision}`;
    return invoke(
      linkConfirmHandler as never,
      apiEvent({
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'concurrency-link' },
        params: { approvalId, decision: t.decision },
        query: { api_key: t.token, confirm: '1', comment: `${t.channel} ${t.decision}` },
        // The confirmation page's form carries its page value (shared/http/page-form.ts).
        body: new URLSearchParams({ page: pageFormValue(t.token, path) }).toString(),
      }),
    );
  }
  return invoke(
    (t.decision === 'approve' ? v1ApproveHandler : v1RejectHandler) as never,
    apiEvent({
      method: 'POST',
      path: `/api/v1/approvals/${approvalId}/${t.decision}`,
      headers: auth,
      params: { approvalId },
      body: { comment: `${t.channel} ${t.decision}` },
    }),
  );
}

/** 50 attempts: approve and reject alternating, both reviewers, all three channels. */
const attempts = (round: number): Attempt[] =>
  Array.from({ length: CONCURRENT }, (_, i) => ({
    channel: (['post', 'post', 'link', 'v1'] as const)[(i + round) % 4] as Attempt['channel'],
    decision: (i + round) % 2 === 0 ? 'approve' : 'reject',
    token: i % 3 === 0 ? a.memberKey.token : a.adminKey.token,
  }));

describe('concurrent decisions on one approval', () => {
  it(`${CONCURRENT} concurrent decisions give exactly one 200 and ${CONCURRENT - 1} × 409, and the run moves once (× ${APPROVALS} approvals)`, {
    timeout: 170_000,
  }, async () => {
    const definition = WorkflowDefinition.parse({
      steps: [
        { id: 'approve', type: 'manual_approval', title: 'Race', reviewers: ['role:admin', 'role:member'] },
        { id: 'after', type: 'set', values: { after: "{% 'decided by ' & $steps.approve.decidedBy %}" } },
      ],
    });
    const workflow = await createWorkflow(
      { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
      { name: 'race', definition, recovery: false, editors: [] },
    );
    const runs = await Promise.all(
      Array.from({ length: APPROVALS }, async () => {
        const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
        return eventually(
          () => readRun(execution),
          (e) => e.status !== 'PENDING' && e.status !== 'RUNNING',
          60_000,
        );
      }),
    );
    expect(runs.map((r) => r.status)).toEqual(runs.map(() => 'WAITING_APPROVAL'));

    const users = { [a.admin.userId]: a.adminKey.token, [a.member.userId]: a.memberKey.token };
    const winners: { run: Execution; decision: string; decidedBy: string }[] = [];
    for (const [round, run] of runs.entries()) {
      const approvalId = run.approvalId as string;
      const tries = attempts(round);
      const results = await Promise.all(tries.map((t) => attempt(approvalId, t)));
      const statuses = results.map((r) => r.status);
      const summary = `approval ${round}: ${JSON.stringify(statuses)}`;
      expect(
        statuses.filter((s) => s === 200),
        summary,
      ).toHaveLength(1);
      expect(
        statuses.filter((s) => s === 409),
        summary,
      ).toHaveLength(CONCURRENT - 1);
      for (const r of results.filter((x) => x.status === 409 && x.json)) expect(r.json.code).toBe('APPROVAL_ALREADY_HANDLED');

      const win = statuses.indexOf(200);
      const winner = tries[win] as Attempt;
      if (winner.channel === 'post') expect(results[win]?.json).toEqual({ ok: true, approvalId, decision: winner.decision });
      const approval = await getApproval(run.accountId, approvalId);
      expect(approval).toMatchObject({
        status: winner.decision === 'approve' ? 'APPROVED' : 'REJECTED',
        decision: winner.decision,
        comment: `${winner.channel} ${winner.decision}`,
      });
      expect(users[approval?.decidedBy as string]).toBe(winner.token);

      // The audit: one decision (the winner's), 49 refusals as 409s.
      const audit = await listAudit(run.accountId, approvalId);
      expect(audit.filter((h) => h.outcome === 'decided')).toEqual([
        expect.objectContaining({ decision: winner.decision, channel: winner.channel, userId: approval?.decidedBy }),
      ]);
      const refused = audit.filter((h) => h.outcome === 'refused');
      expect(refused).toHaveLength(CONCURRENT - 1);
      expect(refused.every((h) => h.status === 409 && h.code === 'APPROVAL_ALREADY_HANDLED')).toBe(true);
      // The account's audit log holds the same: one decision by the winner's key, 49 refused attempts, each with its channel.
      const logged = [];
      let next: Record<string, unknown> | undefined;
      do {
        const page = await listAuditEntries({ accountId: run.accountId, objectType: 'approval', objectId: approvalId }, 500, next);
        logged.push(...page.items);
        next = page.lastKey;
      } while (next);
      expect(logged.filter((e) => e.action !== 'approval.refused')).toEqual([
        expect.objectContaining({
          action: winner.decision === 'approve' ? 'approval.approved' : 'approval.rejected',
          actor: expect.objectContaining({ kind: 'key', userId: approval?.decidedBy }),
          channel: winner.channel === 'link' ? 'link' : 'api',
          ip: '203.0.113.7',
        }),
      ]);
      expect(logged.filter((e) => e.action === 'approval.refused')).toHaveLength(CONCURRENT - 1);
      winners.push({ run, decision: winner.decision, decidedBy: approval?.decidedBy as string });
    }

    // Every run moved exactly once, as its winning decision says.
    for (const { run, decision, decidedBy } of winners) {
      const done = await eventually(
        () => readRun(run),
        (e) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(e.status),
        60_000,
      );
      expect(done.outputs.approve).toMatchObject({ decision, decidedBy });
      if (decision === 'approve') {
        expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
        expect(done.variables.after).toMatch(/^decided by usr_/);
      } else {
        expect(done.status).toBe('FAILED');
        expect(done.error?.code).toBe('APPROVAL_REJECTED');
      }
      const types = await eventTypes(run);
      expect(
        types.filter((t) => t === 'approval.decided'),
        types.join(','),
      ).toHaveLength(1);
      expect(types.filter((t) => t === 'execution.succeeded' || t === 'execution.failed')).toHaveLength(1);
      expect(types.filter((t) => t === 'approval.requested')).toHaveLength(1);
    }
  });
});
