import { writeAll } from '../db/transact.ts';
import { decisionAudit } from '../db/audited.ts';
import type { AuditChannel } from '../db/entities/audit.ts';
import { Refused, refused, retryConflicts } from '../db/conflicts.ts';
import {
  type Approval,
  type ApprovalStatus,
  type AuditRecord,
  auditPut,
  getApproval,
  handledUpdate,
  newAuditId,
} from '../db/entities/approval.ts';
import type { ChannelType } from '../db/channel-types.ts';
import type { Role } from '../db/entities/user.ts';
import { decisionMessage, decisionTransition, writeDecision } from '../engine/decisions.ts';
import { newDispatch } from '../engine/dispatch.ts';
import { AppError, conflict, type FieldError, forbidden, notFound, validationFailed } from '../errors.ts';
import { httpStatus } from '../http-status.ts';
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
  type Vote,
} from './quorum.ts';
import { readThrough, userRead } from './records.ts';
import { rejectCondition } from '../db/entities/approval-votes.ts';

// Deciding approvals: who may (reviewers), when (open), with what (form values), and the one decision
// loop for single and quorum approvals. What the API shows of them is in approval-reads.ts.

export type KeyPrincipal = Extract<Principal, { kind: 'apiKey' }>;
/**
 * How a decision came: the spec's POST and `api_key` link, v1, the console's approval page (a signed-in
 * member), or a reviewer's own link sent by mail, Slack or Teams (review-links.ts).
 */
export type Channel = 'post' | 'link' | 'v1' | 'console' | ChannelType;
/**
 * Who reads or decides: an API key's owner, a signed-in console member, a reviewer by their own link, or a
 * member a Slack click maps to (no key). `role`, when the caller has just read it (a console session reads
 * its user on every request), spares the reviewer check its read of the user.
 */
export type Member = Pick<KeyPrincipal, 'accountId' | 'userId'> & { role?: Role };
export type Decider = Member & { keyId?: string };
/** The channels whose form values are sent by a person who sees the form: its required fields are enforced. */
const FORM_CHANNELS: readonly Channel[] = ['v1', 'console'];
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
  /** The account audit log's channel, where `channel` does not say it (a reviewer's link sent by Slack is `link`). */
  auditChannel?: AuditChannel;
  /** Sent from a page that showed the form (a link's confirmation page): its required fields are enforced, whatever the channel. */
  formShown?: boolean;
};

/** An approval of the caller's account, or 404 (another account's id is indistinguishable from none). */
export async function requireApproval(accountId: string, approvalId: string): Promise<Approval> {
  const a = await getApproval(accountId, approvalId);
  if (!a) throw notFound('APPROVAL_NOT_FOUND', `Approval ${approvalId} does not exist.`);
  return a;
}

/** Reviewers are `user:<id>`, `role:admin`, `role:member`; the key owner (or signed-in member) must match one. */
export async function isReviewer(p: Member, a: Pick<Approval, 'reviewers'>): Promise<boolean> {
  if (a.reviewers.includes(`user:${p.userId}`)) return true;
  if (!a.reviewers.some((r) => r.startsWith('role:'))) return false;
  if (p.role !== undefined) return a.reviewers.includes(`role:${p.role}`);
  const [user] = await readThrough([userRead(p.accountId, p.userId)]);
  return !!user && a.reviewers.includes(`role:${user.role}`);
}

/** 403 unless the key owner is a reviewer of the approval. */
export async function assertReviewer(p: Member, a: Pick<Approval, 'reviewers'>): Promise<void> {
  if (!(await isReviewer(p, a))) throw forbidden('NOT_A_REVIEWER', 'The key owner is not a reviewer of this approval.');
}

/** 409 unless the approval can still be decided (PENDING and before its deadline). */
export function assertOpen(a: Approval, now = Date.now()): void {
  if (a.status !== 'PENDING') throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${a.approvalId} is ${a.status}.`);
  if (a.expiresAt !== undefined && a.expiresAt <= now) throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${a.approvalId} has expired.`);
}

/** The approval a one-click page shows, checked as a decision would be: 404, 403, 409 before anything is shown. */
export async function approvalToDecide(p: Member, approvalId: string): Promise<Approval> {
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
 * A submitted form's strings as the step's fields expect them: `true`/`false` for booleans, numbers for
 * numbers (anything else is left as sent, for `decide` to refuse with the field's path). Nothing sent: none.
 * The reviewer's link page and the console's approval page send their fields this way (`field.<name>`).
 */
export function formValuesOf(a: Approval, sent: Record<string, string> = {}): Record<string, unknown> | undefined {
  if (Object.keys(sent).length === 0) return undefined;
  const types = new Map((a.form ?? []).map((f) => [f.name, f.type]));
  return Object.fromEntries(
    Object.entries(sent).map(([name, v]) => {
      const type = types.get(name);
      if (type === 'boolean' && (v === 'true' || v === 'false')) return [name, v === 'true'];
      if (type === 'number' && v.trim() !== '' && Number.isFinite(Number(v))) return [name, Number(v)];
      return [name, v];
    }),
  );
}

/**
 * Decide an approval, exactly once: the approval's state change (conditional on PENDING), its audit
 * record and the run's resumption are one transaction, so under any concurrency one decision wins and
 * the others answer 409. Refused attempts (403, 409, 400) are audited too. A run that is no longer
 * waiting (INTERRUPTED) does not move; the decision is still recorded.
 *
 * On a quorum approval (`minApprovals` above 1; `quorum.ts` explains why the run moves once) an
 * approval is one vote, counted by a conditional write on the approval; the vote that completes the
 * quorum moves the run (its form values apply). One rejection rejects, as long as the quorum is open.
 * A reviewer decides once (409 `REVIEWER_ALREADY_DECIDED`). Either way one loop: a write refused by
 * its condition (decided, voted or ended meanwhile) reads the approval again and tries again.
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
    const quorum = isQuorum(approval);
    // One dispatch for every attempt: a single decision's message goes out beside the first write (the
    // worker waits for a decision it cannot see yet) and stays valid when a retry is the write that lands.
    const dispatch = newDispatch();
    let sent: Promise<unknown> | undefined;
    let current = approval;
    return await retryConflicts(
      async (attempt) => {
        if (attempt > 1) current = (await getApproval(p.accountId, current.approvalId)) ?? current;
        assertOpen(current, now);
        if (quorum) {
          assertNotVoted(current, p.userId);
          if (quorumReached(current)) {
            await completeStalledQuorum(current, now);
            throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${current.approvalId} has its approvals.`);
          }
        }
        const form =
          req.decision === 'approve' ? formValues(current, req.formData, req.formShown || FORM_CHANNELS.includes(req.channel)) : undefined;
        const record: AuditRecord = {
          ...audit,
          ...(req.formData ? { form: { original: form?.original ?? {}, edited: req.formData } } : {}),
        };
        if (quorum && form) return await vote(current, p.userId, { audit: record, formData: form.values, via: req.auditChannel }, now);
        const run = decisionTransition(
          current,
          { decision: req.decision, comment: req.comment, decidedBy: p.userId, formData: form?.values },
          { now, dispatch },
        );
        const status: ApprovalStatus = req.decision === 'approve' ? 'APPROVED' : 'REJECTED';
        const decided = { status, decision: req.decision, comment: req.comment, decidedBy: p.userId, decidedAt: now };
        const fields = { ...decided, ...(form ? { formData: JSON.stringify(form.values) } : {}) };
        // A quorum's rejection lands only while the quorum is open and from a reviewer who has not approved.
        const own = [
          { Update: handledUpdate(p.accountId, current.approvalId, fields, now, quorum ? rejectCondition(p.userId) : undefined) },
          auditPut(record),
          decisionAudit(record, req.auditChannel),
        ];
        if (!quorum) sent ??= decisionMessage(current, run).catch((error: unknown) => error);
        // A run that no longer waits for it (cancelled, interrupted) stays as it is; the decision is recorded.
        const written = await writeDecision(own, run);
        if (written === 'refused') throw new Refused();
        emit('ApprovalDecided');
        // The run's message: after the write that moved it, or again when the one sent beside the write failed.
        if (quorum ? written === 'moved' : (await sent) instanceof Error) await decisionMessage(current, run);
        return { ...current, ...decided };
      },
      {
        attempts: 20,
        retryOn: refused,
        exhausted: () => {
          throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${approval.approvalId} was already handled.`);
        },
      },
    );
  } catch (e) {
    if (e instanceof AppError && (e.kind === 'invalid' || e.kind === 'forbidden' || e.kind === 'conflict')) {
      const refusal: AuditRecord = { ...audit, outcome: 'refused', status: httpStatus(e), code: e.code };
      await writeAll([auditPut(refusal), decisionAudit(refusal, req.auditChannel)]).catch((err: unknown) =>
        logger.warn('refused decision not audited', { approvalId: req.approvalId, error: err as Error }),
      );
    }
    throw e;
  }
}

/** A quorum approval's approving vote; the vote that completes the quorum moves the run. `Refused` when its condition refused it. */
async function vote(current: Approval, userId: string, v: Vote, now: number): Promise<Approval> {
  const voted = await castVote(current, userId, v);
  if (!voted) throw new Refused();
  emit('ApprovalDecided');
  if (!quorumReached(voted)) {
    await recordVote(voted, v);
    return voted;
  }
  // This vote completed the quorum: it moves the run.
  const done = await completeQuorum(voted, now);
  if (!done) throw conflict('APPROVAL_ALREADY_HANDLED', `Approval ${current.approvalId} was cancelled.`);
  return done;
}
