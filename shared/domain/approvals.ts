import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db } from '../clients.ts';
import {
  type Approval,
  type ApprovalStatus,
  type AuditRecord,
  auditPut,
  getApproval,
  handledUpdate,
  listApprovalsByStatus,
  listAudit,
  newAuditId,
} from '../db/entities/approval.ts';
import { getExecution } from '../db/entities/execution.ts';
import { listApprovalMessages } from '../db/entities/approval-message.ts';
import { notifiedView } from './notified.ts';
import { listUsers } from '../db/entities/user.ts';
import { pause } from '../db/conflicts.ts';
import { decisionMessage, decisionTransition, writeDecision } from '../engine/decisions.ts';
import { newDispatch } from '../engine/dispatch.ts';
import { AppError, conflict, type FieldError, forbidden, notFound, validationFailed } from '../errors.ts';
import { httpStatus } from '../http-status.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { logger } from '../logger.ts';
import { emit } from '../metrics.ts';
import type { Principal } from './principal.ts';
import {
  assertNotVoted,
  castVote,
  completeQuorum,
  completeStalledQuorum,
  isQuorum,
  quorumReached,
  recordVote,
  rejectCondition,
} from './quorum.ts';
import { readThrough, userRead } from './records.ts';

type KeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;
/** How a decision came: the spec's POST and `api_key` link, v1, or a reviewer's own link sent by mail, Slack or Teams (review-links.ts). */
export type Channel = 'post' | 'link' | 'v1' | 'email' | 'slack' | 'teams';
/** Who decides: an API key's owner, a reviewer by their own link, or a member a Slack click maps to (no key). */
export type Decider = Pick<KeyPrincipal, 'accountId' | 'userId'> & { keyId?: string };
export type DecisionRequest = {
  principal: Decider;
  approvalId: string;
  decision: 'approve' | 'reject';
  comment?: string;
  /** v1 approve only: values for the step's form. */
  formData?: Record<string, unknown>;
  channel: Channel;
  sourceIp: string;
  userAgent?: string;
};

export const approvalView = (a: Approval, history?: AuditRecord[]) => ({
  approvalId: a.approvalId,
  executionId: a.executionId,
  workflowId: a.workflowId,
  stepId: a.stepId,
  status: a.status,
  title: a.title,
  ...(a.description !== undefined ? { description: a.description } : {}),
  reviewers: a.reviewers,
  ...(a.form ? { form: a.form } : {}),
  ...(a.expiresAt !== undefined ? { expiresAt: a.expiresAt } : {}),
  ...(a.loop ? { loop: a.loop } : {}),
  createdAt: a.createdAt,
  minApprovals: a.minApprovals ?? 1,
  approvals: a.approvals ?? (a.status === 'APPROVED' ? 1 : 0),
  ...(a.decision ? { decision: a.decision, comment: a.comment ?? null, decidedBy: a.decidedBy, decidedAt: a.decidedAt } : {}),
  ...(history ? { history: history.map(({ accountId: _a, approvalId: _b, ...h }) => h) } : {}),
});

/** An approval of the caller's account, or 404 (another account's id is indistinguishable from none). */
export async function requireApproval(accountId: string, approvalId: string): Promise<Approval> {
  const a = await getApproval(accountId, approvalId);
  if (!a) throw notFound('APPROVAL_NOT_FOUND', `Approval ${approvalId} does not exist.`);
  return a;
}

/** Reviewers are `user:<id>`, `role:admin`, `role:member`; the key owner must match one. */
export async function isReviewer(p: Pick<KeyPrincipal, 'accountId' | 'userId'>, a: Pick<Approval, 'reviewers'>): Promise<boolean> {
  if (a.reviewers.includes(`user:${p.userId}`)) return true;
  if (!a.reviewers.some((r) => r.startsWith('role:'))) return false;
  const [user] = await readThrough([userRead(p.accountId, p.userId)]);
  return !!user && a.reviewers.includes(`role:${user.role}`);
}

/** 403 unless the key owner is a reviewer of the approval. */
export async function assertReviewer(p: Pick<KeyPrincipal, 'accountId' | 'userId'>, a: Pick<Approval, 'reviewers'>): Promise<void> {
  if (!(await isReviewer(p, a))) throw forbidden('NOT_A_REVIEWER', 'The key owner is not a reviewer of this approval.');
}

/** 409 unless the approval can still be decided (PENDING and before its deadline). */
export function assertOpen(a: Approval, now = Date.now()): void {
  if (a.status !== 'PENDING') throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${a.approvalId} is ${a.status}.`);
  if (a.expiresAt !== undefined && a.expiresAt <= now) throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${a.approvalId} has expired.`);
}

/** The approval a one-click page shows, checked as a decision would be: 404, 403, 409 before anything is shown. */
export async function approvalToDecide(p: Pick<KeyPrincipal, 'accountId' | 'userId'>, approvalId: string): Promise<Approval> {
  const a = await requireApproval(p.accountId, approvalId);
  await assertReviewer(p, a);
  assertOpen(a);
  assertNotVoted(a, p.userId);
  return a;
}

/**
 * The form's values: defaults overlaid with what was submitted, checked against the fields. Required
 * fields are enforced only where form data can be sent (v1 approve); a one-click link or the spec's
 * POST approves with the defaults.
 */
export function formValues(a: Approval, submitted: Record<string, unknown> = {}, enforceRequired = true) {
  const form = a.form ?? [];
  const errors: FieldError[] = [];
  const original = Object.fromEntries(form.filter((f) => f.default !== undefined).map((f) => [f.name, f.default]));
  for (const name of Object.keys(submitted))
    if (!form.some((f) => f.name === name)) errors.push({ path: `formData.${name}`, message: 'not a field of this form' });
  const values: Record<string, unknown> = { ...original };
  for (const f of form) {
    const v = Object.hasOwn(submitted, f.name) ? submitted[f.name] : original[f.name];
    if (v === undefined || v === null || v === '') {
      if (f.required && enforceRequired) errors.push({ path: `formData.${f.name}`, message: 'is required' });
      continue;
    }
    if (typeof v !== f.type) errors.push({ path: `formData.${f.name}`, message: `must be a ${f.type}` });
    else if (f.enum && !f.enum.includes(v))
      errors.push({ path: `formData.${f.name}`, message: `must be one of ${JSON.stringify(f.enum)}` });
    else values[f.name] = v;
  }
  if (errors.length) throw validationFailed(errors);
  return { original, values };
}

/**
 * Decide an approval, exactly once: the approval's state change (conditional on PENDING), its audit
 * record and the run's resumption are one transaction, so under any concurrency one decision wins and
 * the others answer 409. Refused attempts (403, 409, 400) are audited too. A run that is no longer
 * waiting (INTERRUPTED) does not move; the decision is still recorded.
 */
export async function decide(req: DecisionRequest, now = Date.now()): Promise<Approval> {
  const { principal: p } = req;
  const approval = await requireApproval(p.accountId, req.approvalId);
  const audit: AuditRecord = {
    auditId: newAuditId(now),
    approvalId: approval.approvalId,
    accountId: p.accountId,
    at: now,
    outcome: 'decided',
    decision: req.decision,
    comment: req.comment,
    userId: p.userId,
    keyId: p.keyId,
    channel: req.channel,
    sourceIp: req.sourceIp,
    userAgent: req.userAgent?.slice(0, 512),
  };
  try {
    await assertReviewer(p, approval);
    if (isQuorum(approval)) return await decideByQuorum(req, approval, audit, now);
    // One dispatch for every attempt: the run's message goes out beside the first write (the worker
    // waits for a decision it cannot see yet) and stays valid when a retry is the write that lands.
    const dispatch = newDispatch();
    let sent: Promise<unknown> | undefined;
    let current = approval;
    for (let attempt = 0; attempt < 20; attempt++) {
      assertOpen(current, now);
      const form = req.decision === 'approve' ? formValues(current, req.formData, req.channel === 'v1') : undefined;
      const record: AuditRecord = { ...audit, ...(req.formData ? { form: { original: form?.original ?? {}, edited: req.formData } } : {}) };
      const run = decisionTransition(
        current,
        { decision: req.decision, comment: req.comment, decidedBy: p.userId, formData: form?.values },
        { now, dispatch },
      );
      const status: ApprovalStatus = req.decision === 'approve' ? 'APPROVED' : 'REJECTED';
      const decided = { status, decision: req.decision, comment: req.comment, decidedBy: p.userId, decidedAt: now };
      const own = [
        {
          Update: handledUpdate(
            p.accountId,
            current.approvalId,
            { ...decided, ...(form ? { formData: JSON.stringify(form.values) } : {}) },
            now,
          ),
        },
        auditPut(record),
      ];
      sent ??= decisionMessage(current, run).catch((error: unknown) => error);
      // A run that no longer waits for it (cancelled, interrupted) stays as it is; the decision is recorded.
      if ((await writeDecision(own, run)) === 'refused') {
        await pause(attempt);
        current = (await getApproval(p.accountId, current.approvalId)) ?? current;
        continue;
      }
      emit('ApprovalDecided');
      // The message sent beside the write failed: send it again now that the decision is in.
      if ((await sent) instanceof Error) await decisionMessage(current, run);
      return { ...current, ...decided };
    }
    throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${approval.approvalId} was already handled.`);
  } catch (e) {
    if (e instanceof AppError && (e.kind === 'invalid' || e.kind === 'forbidden' || e.kind === 'conflict')) {
      const refused: AuditRecord = { ...audit, outcome: 'refused', status: httpStatus(e), code: e.code };
      await db()
        .send(new TransactWriteCommand({ TransactItems: [auditPut(refused)] }))
        .catch((err: unknown) => logger.warn('refused decision not audited', { approvalId: req.approvalId, error: err as Error }));
    }
    throw e;
  }
}

/**
 * A decision on a quorum approval (`minApprovals` above 1; `quorum.ts` explains why the run moves
 * once): an approval is one vote, counted by a conditional write on the approval; the vote that
 * completes the quorum moves the run (its form values apply). One rejection rejects, as long as the
 * quorum is open. A reviewer decides once (409 `REVIEWER_ALREADY_DECIDED`).
 */
async function decideByQuorum(req: DecisionRequest, approval: Approval, audit: AuditRecord, now: number): Promise<Approval> {
  const { principal: p } = req;
  let current = approval;
  for (let attempt = 0; attempt < 20; attempt++) {
    assertOpen(current, now);
    assertNotVoted(current, p.userId);
    if (quorumReached(current)) {
      await completeStalledQuorum(current, now);
      throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${current.approvalId} has its approvals.`);
    }
    if (req.decision === 'reject') {
      const run = decisionTransition(current, { decision: 'reject', comment: req.comment, decidedBy: p.userId }, { now });
      const decided = {
        status: 'REJECTED' as const,
        decision: 'reject' as const,
        comment: req.comment,
        decidedBy: p.userId,
        decidedAt: now,
      };
      const own = [{ Update: handledUpdate(p.accountId, current.approvalId, decided, now, rejectCondition(p.userId)) }, auditPut(audit)];
      const written = await writeDecision(own, run);
      if (written !== 'refused') {
        if (written === 'moved') await decisionMessage(current, run);
        emit('ApprovalDecided');
        return { ...current, ...decided };
      }
    } else {
      const form = formValues(current, req.formData, req.channel === 'v1');
      const record: AuditRecord = { ...audit, ...(req.formData ? { form: { original: form.original, edited: req.formData } } : {}) };
      const voted = await castVote(current, p.userId, { audit: record, formData: form.values });
      if (voted) {
        emit('ApprovalDecided');
        if (!quorumReached(voted)) {
          await recordVote(voted, { audit: record, formData: form.values });
          return voted;
        }
        // This vote completed the quorum: it moves the run.
        const done = await completeQuorum(voted, now);
        if (!done) throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${current.approvalId} was cancelled.`);
        return done;
      }
    }
    // Refused by its condition: decided, voted or ended meanwhile; look again.
    await pause(attempt);
    current = (await getApproval(p.accountId, current.approvalId)) ?? current;
  }
  throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${approval.approvalId} was already handled.`);
}

/** v1 list: approvals in a status (PENDING by default) that the key owner may decide, oldest first. */
export async function pageApprovals(p: KeyPrincipal, status: ApprovalStatus, limit: number, cursor: string | undefined) {
  const binding = `approvals:${p.accountId}:${p.userId}:${status}`;
  const page = await listApprovalsByStatus(p.accountId, status, limit, decodeCursor(cursor, binding));
  const mine = await Promise.all(page.items.map((a) => isReviewer(p, a)));
  return { items: page.items.filter((_, i) => mine[i]).map((a) => approvalView(a)), nextCursor: encodeCursor(page.lastKey, binding) };
}

/** The users who may still decide a pending approval: its reviewers (roles resolved) who have not approved yet. */
async function stillToDecide(a: Approval): Promise<string[]> {
  if (a.status !== 'PENDING') return [];
  const named = a.reviewers.filter((r) => r.startsWith('user:')).map((r) => r.slice('user:'.length));
  const users = a.reviewers.some((r) => r.startsWith('role:'))
    ? (await listUsers(a.accountId)).filter((u) => a.reviewers.includes(`role:${u.role}`) || named.includes(u.userId)).map((u) => u.userId)
    : named;
  return users.filter((u) => !a.approvedBy?.includes(u));
}

/** v1 detail: the approval, its form and context, and its audit history. Reviewers only (else 403). */
export async function approvalDetail(p: KeyPrincipal, approvalId: string) {
  const a = await requireApproval(p.accountId, approvalId);
  await assertReviewer(p, a);
  const [history, execution, pending, messages] = await Promise.all([
    listAudit(p.accountId, approvalId),
    getExecution(p.accountId, a.executionId),
    stillToDecide(a),
    listApprovalMessages(p.accountId, approvalId),
  ]);
  return {
    ...approvalView(a, history),
    decisions: history
      .filter((h) => h.outcome === 'decided')
      .map((h) => ({
        decidedBy: h.userId ?? h.channel,
        decision: h.decision ?? null,
        channel: h.channel,
        at: h.at,
        comment: h.comment ?? null,
      })),
    pendingReviewers: pending,
    ...notifiedView(a, messages),
    context: execution ? { executionStatus: execution.status, trigger: execution.trigger, variables: execution.variables } : null,
  };
}
