import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as decideHandler } from '../../functions/http/approvals/decide.ts';
import { handler as linkHandler } from '../../functions/http/approvals/link.ts';
import { handler as v1ApproveHandler } from '../../functions/http/v1/approvals/approve.ts';
import { handler as v1GetHandler } from '../../functions/http/v1/approvals/get.ts';
import { handler as v1RejectHandler } from '../../functions/http/v1/approvals/reject.ts';
import { resetConfig } from '../../shared/config.ts';
import { type Approval, getApproval, listAudit, newAuditId } from '../../shared/db/entities/approval.ts';
import { listEvents } from '../../shared/db/entities/run-events.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { castVote, QUORUM_GRACE_MS } from '../../shared/domain/quorum.ts';
import { decide } from '../../shared/domain/approvals.ts';
import { expireApproval } from '../../shared/domain/expiry.ts';
import { createWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually, startWorkers, useOwnQueues } from '../support/engine.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { pageFormValue } from '../../shared/http/page-form.ts';

/**
 * Quorum approvals (`minApprovals`): distinct reviewers, one decision each, a rejection wins while the
 * quorum is open, the deciding vote's form values apply; the spec's POST, the one-click link and v1
 * count the same way; under concurrency the quorum moves the run exactly once.
 */

type Account = Awaited<ReturnType<typeof givenAccount>>;
type Channel = 'post' | 'link' | 'v1';
type Reviewer = { userId: string; token: string };

let stopWorkers: () => Promise<unknown>;
let a: Account;
/** Twenty reviewers: the admin, the member and 18 more members. */
let reviewers: Reviewer[];
beforeAll(async () => {
  await useOwnQueues({ RATE_LIMITS: JSON.stringify({ team: 100_000 }) });
  stopWorkers = startWorkers();
  a = await givenAccount();
  const more = await Promise.all(
    Array.from({ length: 18 }, async (_, i) => {
      const u = await createUser(a.account.accountId, uniqueEmail(`reviewer${i}`), PASSWORD, 'member');
      const key = await createKey(
        { accountId: a.account.accountId, userId: u.userId },
        { name: 'k', scopes: ['APPROVAL_RESPOND'], validityDays: 1 },
      );
      return { userId: u.userId, token: key.token };
    }),
  );
  reviewers = [{ userId: a.admin.userId, token: a.adminKey.token }, { userId: a.member.userId, token: a.memberKey.token }, ...more];
}, 60_000);
afterAll(async () => {
  await stopWorkers?.();
  delete process.env.RATE_LIMITS;
  resetConfig();
});

/** One decision through the route's real handler. */
function decision(
  approvalId: string,
  channel: Channel,
  d: 'approve' | 'reject',
  token: string,
  extra: { formData?: object; comment?: string } = {},
) {
  const headers = { authorization: `Bearer ${token}`, 'user-agent': `quorum-${channel}` };
  const comment = extra.comment ?? `${channel} ${d}`;
  if (channel === 'post')
    return invoke(
      decideHandler as never,
      apiEvent({ method: 'POST', path: '/api/webhook-trigger/approval', headers, body: { approvalId, decision: d, comment } }),
    );
  if (channel === 'link')
    return invoke(
      linkHandler as never,
      apiEvent({
        method: 'POST',
        path: `/api/webhook-trigger/approval/${approvalId}/${d}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'quorum-link' },
        params: { approvalId, decision: d },
        query: { api_key: token, confirm: '1', comment },
        // The confirmation page's form carries its page value (shared/http/page-form.ts).
        body: new URLSearchParams({ page: pageFormValue(token, `/api/webhook-trigger/approval/${approvalId}/${d}`) }).toString(),
      }),
    );
  return invoke(
    (d === 'approve' ? v1ApproveHandler : v1RejectHandler) as never,
    apiEvent({
      method: 'POST',
      path: `/api/v1/approvals/${approvalId}/${d}`,
      headers,
      params: { approvalId },
      body: { comment, ...(extra.formData ? { formData: extra.formData } : {}) },
    }),
  );
}
const page = (approvalId: string, d: 'approve' | 'reject', token: string) =>
  invoke(
    linkHandler as never,
    apiEvent({
      path: `/api/webhook-trigger/approval/${approvalId}/${d}`,
      params: { approvalId, decision: d },
      query: { api_key: token },
      headers: { 'user-agent': 'Mozilla/5.0' },
    }),
  );
const detail = (approvalId: string, token: string) =>
  invoke(
    v1GetHandler as never,
    apiEvent({ path: `/api/v1/approvals/${approvalId}`, headers: { authorization: `Bearer ${token}` }, params: { approvalId } }),
  );

const actor = () => ({ accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' as const });
const quorumDefinition = (minApprovals: number, extra: object = {}) =>
  WorkflowDefinition.parse({
    steps: [
      { id: 'approve', type: 'manual_approval', title: 'Pay?', reviewers: ['role:admin', 'role:member'], minApprovals, ...extra },
      { id: 'after', type: 'set', values: { after: "{% 'by ' & $steps.approve.decidedBy %}" } },
    ],
  });
const newWorkflow = (definition: WorkflowDefinition) =>
  createWorkflow(actor(), { name: 'quorum', definition, recovery: false, editors: [] });
const read = (e: Pick<Execution, 'accountId' | 'executionId'>) => getExecution(e.accountId, e.executionId) as Promise<Execution>;
const waiting = async (workflow: Awaited<ReturnType<typeof newWorkflow>>) => {
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  return eventually(
    () => read(execution),
    (e) => e.status === 'WAITING_APPROVAL',
    30_000,
  );
};
const ended = (e: Execution) =>
  eventually(
    () => read(e),
    (x) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(x.status),
    30_000,
  );
const eventsOf = async (e: Execution) => (await listEvents(e.accountId, e.executionId, 500)).items;
const approvalOf = async (e: Execution) => (await getApproval(e.accountId, e.approvalId as string)) as Approval;

describe('quorum definitions', () => {
  it('refuses minApprovals above the named reviewers, and above the users a role resolves to (400 at the path)', async () => {
    const named = WorkflowDefinition.safeParse({
      steps: [
        { id: 'x', type: 'manual_approval', title: 't', reviewers: [`user:${a.admin.userId}`, `user:${a.admin.userId}`], minApprovals: 2 },
      ],
    });
    expect(named.success).toBe(false);
    expect(named.error?.issues.map((i) => i.path.join('.'))).toEqual(['steps.0.minApprovals']);

    // One admin in the account: a quorum of two admins cannot be met.
    const admins = WorkflowDefinition.parse({
      steps: [{ id: 'x', type: 'manual_approval', title: 't', reviewers: ['role:admin'], minApprovals: 2 }],
    });
    await expect(newWorkflow(admins)).rejects.toMatchObject({
      kind: 'invalid',
      code: 'VALIDATION_FAILED',
      extra: { body: { errors: [{ path: 'definition.steps.0.minApprovals', message: expect.stringContaining('at most 1') }] } },
    });
    // Inside a for_each too, at its nested path.
    const nested = WorkflowDefinition.parse({
      steps: [{ id: 'each', type: 'for_each', items: '{% [1] %}', steps: [admins.steps[0]] }],
    });
    await expect(newWorkflow(nested)).rejects.toMatchObject({
      extra: { body: { errors: [{ path: 'definition.steps.0.steps.0.minApprovals', message: expect.stringContaining('at most 1') }] } },
    });
    const ok = await newWorkflow(quorumDefinition(20));
    await expect(updateWorkflow(actor(), ok.workflowId, { definition: quorumDefinition(21) })).rejects.toMatchObject({ kind: 'invalid' });
    expect((await updateWorkflow(actor(), ok.workflowId, { definition: quorumDefinition(3) })).version).toBe(2);
  });
});

describe('quorum decisions', () => {
  it('counts distinct reviewers: a second decision by one reviewer is 409; the deciding vote’s form values apply; every vote is audited', async () => {
    const workflow = await newWorkflow(quorumDefinition(2, { form: [{ name: 'amount', type: 'number', required: true, default: 0 }] }));
    const run = await waiting(workflow);
    const approvalId = run.approvalId as string;
    const [admin, member, third] = reviewers as [Reviewer, Reviewer, Reviewer];

    const first = await decision(approvalId, 'v1', 'approve', member.token, { formData: { amount: 1 } });
    expect(first.status, first.body).toBe(200);
    expect(first.json).toMatchObject({ status: 'PENDING', minApprovals: 2, approvals: 1 });
    for (const [channel, d] of [
      ['post', 'approve'],
      ['v1', 'reject'],
      ['link', 'reject'],
    ] as const) {
      const again = await decision(approvalId, channel, d, member.token);
      expect(again.status, `${channel} ${d}`).toBe(409);
      if (channel !== 'link') expect(again.json.code).toBe('REVIEWER_ALREADY_DECIDED');
    }
    expect((await read(run)).status).toBe('WAITING_APPROVAL');
    // The one-click page answers like a decision would: this reviewer has decided.
    expect((await page(approvalId, 'approve', member.token)).status).toBe(409);

    const seen = await detail(approvalId, admin.token);
    expect(seen.status, seen.body).toBe(200);
    expect(seen.json).toMatchObject({ status: 'PENDING', minApprovals: 2, approvals: 1 });
    expect(seen.json.decisions).toEqual([
      { decidedBy: member.userId, decision: 'approve', channel: 'v1', at: expect.any(Number), comment: 'v1 approve' },
    ]);
    expect([...seen.json.pendingReviewers].sort()).toEqual(
      reviewers
        .filter((r) => r !== member)
        .map((r) => r.userId)
        .sort(),
    );
    // The one-click page says how many approvals are still needed.
    const shown = await page(approvalId, 'approve', third.token);
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('1 of 2; 1 more needed');

    const last = await decision(approvalId, 'v1', 'approve', admin.token, { formData: { amount: 2 } });
    expect(last.status, last.body).toBe(200);
    expect(last.json).toMatchObject({ status: 'APPROVED', decidedBy: admin.userId, approvals: 2 });
    const done = await ended(run);
    expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
    expect(done.variables).toMatchObject({ amount: 2, after: `by ${admin.userId}` });
    expect(done.outputs.approve).toMatchObject({ decision: 'approve', decidedBy: admin.userId, formData: { amount: 2 } });

    // After it is handled: 409 as before.
    expect((await decision(approvalId, 'post', 'approve', third.token)).json.code).toBe('APPROVAL_ALREADY_HANDLED');
    const audit = await listAudit(run.accountId, approvalId);
    const decided = audit.filter((h) => h.outcome === 'decided');
    expect(decided.map((h) => [h.userId, h.channel, h.form?.edited])).toEqual([
      [member.userId, 'v1', { amount: 1 }],
      [admin.userId, 'v1', { amount: 2 }],
    ]);
    expect(audit.filter((h) => h.outcome === 'refused').map((h) => h.code)).toEqual([
      'REVIEWER_ALREADY_DECIDED',
      'REVIEWER_ALREADY_DECIDED',
      'REVIEWER_ALREADY_DECIDED',
      'APPROVAL_ALREADY_HANDLED',
    ]);
    const types = (await eventsOf(run)).map((e) => e.type);
    expect(types.filter((t) => t === 'approval.decided')).toHaveLength(2);
    expect(types.filter((t) => t === 'execution.succeeded')).toHaveLength(1);
    const votes = (await eventsOf(run)).filter((e) => e.type === 'approval.decided');
    expect(votes[0]?.data).toMatchObject({ decidedBy: member.userId, approvals: 1, minApprovals: 2 });
  });

  it('one rejection rejects while the quorum is open (one-click link and POST count the same way)', async () => {
    const run = await waiting(await newWorkflow(quorumDefinition(3)));
    const approvalId = run.approvalId as string;
    const [admin, member, third] = reviewers as [Reviewer, Reviewer, Reviewer];
    const approved = await decision(approvalId, 'post', 'approve', member.token);
    expect(approved.json).toEqual({ ok: true, approvalId, decision: 'approve' });
    const linkVote = await decision(approvalId, 'link', 'approve', third.token);
    expect(linkVote.status).toBe(200);
    expect(linkVote.body).toContain('1 more approval needed');
    expect((await page(approvalId, 'reject', admin.token)).body).toContain('2 of 3; 1 more needed');
    const rejected = await decision(approvalId, 'link', 'reject', admin.token);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toContain('Rejected');
    expect(await approvalOf(run)).toMatchObject({ status: 'REJECTED', decidedBy: admin.userId, approvals: 2 });
    const done = await ended(run);
    expect(done.status).toBe('FAILED');
    expect(done.error?.code).toBe('APPROVAL_REJECTED');
    expect((await decision(approvalId, 'v1', 'approve', (reviewers[3] as Reviewer).token)).json.code).toBe('APPROVAL_ALREADY_HANDLED');
    expect((await eventsOf(run)).filter((e) => e.type === 'approval.decided')).toHaveLength(3);
  });

  it('a quorum whose deciding vote died before moving the run is moved once: by a later decision, or by the expiry sweep', async () => {
    const vote = (approval: Approval, r: Reviewer) =>
      castVote(approval, r.userId, {
        audit: {
          auditId: newAuditId(Date.now()),
          approvalId: approval.approvalId,
          accountId: approval.accountId,
          at: Date.now(),
          outcome: 'decided',
          decision: 'approve',
          userId: r.userId,
          channel: 'v1',
        },
        formData: {},
      });
    const [, member, third, fourth] = reviewers as [Reviewer, Reviewer, Reviewer, Reviewer];
    const principal = (r: Reviewer) =>
      ({ kind: 'apiKey', accountId: a.account.accountId, userId: r.userId, keyId: 'k', scopes: [], plan: 'team' }) as never;

    // Two votes counted (the second reaches the quorum), nobody moved the run: a later decision does, after the grace period.
    const run = await waiting(await newWorkflow(quorumDefinition(2)));
    await vote(await approvalOf(run), member);
    const reached = await vote(await approvalOf(run), third);
    expect(reached).toMatchObject({ status: 'PENDING', approvals: 2 });
    const early = decide({
      principal: principal(fourth),
      approvalId: reached?.approvalId as string,
      decision: 'approve',
      channel: 'v1',
      sourceIp: '203.0.113.1',
    });
    await expect(early).rejects.toMatchObject({ code: 'APPROVAL_ALREADY_HANDLED' });
    expect((await approvalOf(run)).status).toBe('PENDING');
    const late = decide(
      {
        principal: principal(fourth),
        approvalId: reached?.approvalId as string,
        decision: 'reject',
        channel: 'v1',
        sourceIp: '203.0.113.1',
      },
      Date.now() + QUORUM_GRACE_MS,
    );
    await expect(late).rejects.toMatchObject({ code: 'APPROVAL_ALREADY_HANDLED' });
    expect(await approvalOf(run)).toMatchObject({ status: 'APPROVED', decidedBy: third.userId });
    const done = await ended(run);
    expect(done.status).toBe('SUCCEEDED');
    expect(done.variables.after).toBe(`by ${third.userId}`);
    expect((await eventsOf(run)).filter((e) => e.type === 'execution.succeeded')).toHaveLength(1);

    // With a deadline: the expiry sweep does not expire a reached quorum, it applies it.
    const timed = await waiting(await newWorkflow(quorumDefinition(2, { timeoutSeconds: 60 })));
    await vote(await approvalOf(timed), member);
    const due = (await vote(await approvalOf(timed), third)) as Approval;
    expect(await expireApproval(due, (due.expiresAt as number) + QUORUM_GRACE_MS)).toBe(false);
    expect(await approvalOf(timed)).toMatchObject({ status: 'APPROVED', decidedBy: third.userId });
    expect((await ended(timed)).status).toBe('SUCCEEDED');
    expect((await eventsOf(timed)).map((e) => e.type)).not.toContain('approval.expired');
  });
});

describe('quorum under concurrency', () => {
  const channels: Channel[] = ['post', 'link', 'v1'];

  it('20 concurrent reviewers on a quorum of 3: three 200s, seventeen 409s, the run moves once (× 3)', { timeout: 120_000 }, async () => {
    const workflow = await newWorkflow(quorumDefinition(3));
    for (let round = 0; round < 3; round++) {
      const run = await waiting(workflow);
      const approvalId = run.approvalId as string;
      const results = await Promise.all(
        reviewers.map((r, i) => decision(approvalId, channels[(i + round) % 3] as Channel, 'approve', r.token)),
      );
      const statuses = results.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 200),
        JSON.stringify(statuses),
      ).toHaveLength(3);
      expect(
        statuses.filter((s) => s === 409),
        JSON.stringify(statuses),
      ).toHaveLength(17);
      for (const r of results.filter((x) => x.status === 409 && x.json)) expect(r.json.code).toBe('APPROVAL_ALREADY_HANDLED');
      const approval = await approvalOf(run);
      const winners = reviewers.filter((_, i) => results[i]?.status === 200).map((r) => r.userId);
      expect(approval).toMatchObject({ status: 'APPROVED', approvals: 3 });
      expect([...(approval.approvedBy ?? [])].sort()).toEqual([...winners].sort());
      expect(winners).toContain(approval.decidedBy);

      const done = await ended(run);
      expect(done.status, JSON.stringify(done.error)).toBe('SUCCEEDED');
      const events = await eventsOf(run);
      const types = events.map((e) => e.type);
      expect(types.filter((t) => t === 'approval.decided')).toHaveLength(3);
      expect(types.filter((t) => t === 'execution.succeeded')).toHaveLength(1);
      // The approval step's end, and the step after it.
      expect(types.filter((t) => t === 'step.succeeded')).toHaveLength(2);
      // Votes written beside the approval and the decision on the run: unique sequence numbers, and in seq
      // order the run's story (votes numbered in the order the approval counted them, which concurrent
      // writers may put in the log in another order).
      const seqs = events.map((e) => e.seq as number);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect([...events].sort((x, y) => (x.seq as number) - (y.seq as number)).map((e) => e.type)).toEqual([
        'execution.started',
        'step.started',
        'approval.requested',
        'approval.decided',
        'approval.decided',
        'approval.decided',
        'step.succeeded',
        'step.started',
        'step.succeeded',
        'execution.succeeded',
      ]);
      const audit = await listAudit(run.accountId, approvalId);
      expect(audit.filter((h) => h.outcome === 'decided')).toHaveLength(3);
      expect(audit.filter((h) => h.outcome === 'refused')).toHaveLength(17);
    }
  });

  it('concurrent approvals and rejections: either the quorum or one rejection wins, and the run moves once', {
    timeout: 120_000,
  }, async () => {
    const workflow = await newWorkflow(quorumDefinition(3));
    for (let round = 0; round < 3; round++) {
      const run = await waiting(workflow);
      const approvalId = run.approvalId as string;
      const decisions = reviewers.map((_, i) => ((i + round) % 4 === 0 ? 'reject' : 'approve') as 'approve' | 'reject');
      const results = await Promise.all(
        reviewers.map((r, i) => decision(approvalId, channels[i % 3] as Channel, decisions[i] as 'approve' | 'reject', r.token)),
      );
      const ok = results.map((r, i) => (r.status === 200 ? decisions[i] : undefined));
      expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      const approval = await approvalOf(run);
      const done = await ended(run);
      if (approval.status === 'APPROVED') {
        expect(ok.filter((d) => d === 'approve')).toHaveLength(3);
        expect(ok.filter((d) => d === 'reject')).toHaveLength(0);
        expect(done.status).toBe('SUCCEEDED');
      } else {
        expect(approval.status).toBe('REJECTED');
        expect(ok.filter((d) => d === 'reject')).toHaveLength(1);
        expect(ok.filter((d) => d === 'approve').length).toBeLessThan(3);
        expect(approval.approvals).toBe(ok.filter((d) => d === 'approve').length);
        expect(done.error?.code).toBe('APPROVAL_REJECTED');
      }
      const types = (await eventsOf(run)).map((e) => e.type);
      expect(types.filter((t) => t === 'approval.decided')).toHaveLength(ok.filter(Boolean).length);
      expect(types.filter((t) => t === 'execution.succeeded' || t === 'execution.failed')).toHaveLength(1);
    }
  });

  it('one reviewer deciding five times at once counts once', async () => {
    const run = await waiting(await newWorkflow(quorumDefinition(2)));
    const approvalId = run.approvalId as string;
    const me = reviewers[4] as Reviewer;
    const results = await Promise.all(
      channels
        .concat(channels)
        .slice(0, 5)
        .map((c) => decision(approvalId, c, 'approve', me.token)),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
    for (const r of results.filter((x) => x.status === 409 && x.json)) expect(r.json.code).toBe('REVIEWER_ALREADY_DECIDED');
    expect(await approvalOf(run)).toMatchObject({ status: 'PENDING', approvals: 1, approvedBy: [me.userId] });
  });
});
