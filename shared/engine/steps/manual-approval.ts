import * as z from 'zod';
import { APPROVAL_LINK_PATH, link } from '../../links.ts';
import { nudgePut } from '../../db/entities/approval-nudge.ts';
import { type Approval, approvalPut } from '../../db/entities/approval.ts';
import { newId } from '../../ids.ts';
import { isExpression } from '../expression-syntax.ts';
import { evaluateTemplate } from '../expressions.ts';
import { hasType } from '../variable-types.ts';
import { ApprovalEscalate, ApprovalNotify, ApprovalRemind } from './approval-notify.ts';
import { base, Reviewer, VarName } from './common.ts';
import { asText, type Issue, type LeafStepModule, type StepContext, stepFault, type Wait } from './types.ts';

const FieldType = z.enum(['string', 'number', 'boolean']);
const Scalar = z.union([z.string(), z.number(), z.boolean()]);
export const FormField = z
  .strictObject({
    name: VarName,
    type: FieldType,
    label: z.string().optional(),
    required: z.boolean().default(false),
    default: Scalar.optional(),
    enum: z.array(Scalar).min(1).max(100).optional(),
  })
  .superRefine((f, ctx) => {
    const literal = f.default !== undefined && !(typeof f.default === 'string' && isExpression(f.default));
    if (literal && !hasType(f.default, f.type))
      ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${f.type} or an expression` });
    else if (literal && f.enum && !f.enum.includes(f.default!))
      ctx.addIssue({ code: 'custom', path: ['default'], message: 'must be one of enum' });
    f.enum?.forEach((v, i) => {
      if (!hasType(v, f.type)) ctx.addIssue({ code: 'custom', path: ['enum', i], message: `must be a ${f.type}` });
    });
  });
export type FormField = z.infer<typeof FormField>;

export const ManualApprovalStep = z.strictObject({
  ...base,
  type: z.literal('manual_approval'),
  title: z.string().min(1),
  description: z.string().optional(),
  reviewers: z.array(Reviewer).min(1).max(50),
  /** Distinct reviewers who must approve (absent: 1); one rejection rejects. See `quorumIssue`. */
  minApprovals: z.number().int().min(1).max(100).optional(),
  timeoutSeconds: z.number().int().min(60).max(2_592_000).optional(),
  onTimeout: z.enum(['fail', 'approve', 'reject']).default('fail'),
  onReject: z.enum(['fail', 'continue']).default('fail'),
  /** Who is told, on which of the account's channels (`ApprovalNotify`). */
  notify: z.array(ApprovalNotify).min(1).max(10).optional(),
  /** Reminders to the reviewers who have not decided, through `notify` (`ApprovalRemind`). */
  remind: ApprovalRemind.optional(),
  /** Reviewers added while still pending, told through their own `notify` (`ApprovalEscalate`). */
  escalate: ApprovalEscalate.optional(),
  form: z
    .array(FormField)
    .max(50)
    .superRefine((fields, ctx) => {
      const seen = new Set<string>();
      fields.forEach((f, i) => {
        if (seen.has(f.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate field name "${f.name}"` });
        seen.add(f.name);
      });
    })
    .optional(),
});
export type ManualApprovalStep = z.infer<typeof ManualApprovalStep>;

/** A test run's decision in place of the reviewers': `form`, the values an approve submits. */
export const ApprovalMock = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  form: z.record(z.string(), z.unknown()).optional(),
  comment: z.string().max(1000).optional(),
});
export type ApprovalMock = z.infer<typeof ApprovalMock>;

/**
 * A quorum of named users only cannot exceed them (`role:` reviewers are counted against the
 * account when the workflow is saved, `shared/domain/workflows.ts`).
 */
function quorumIssue(step: Record<string, unknown>): string | undefined {
  const { reviewers, minApprovals } = step;
  if (typeof minApprovals !== 'number' || !Array.isArray(reviewers)) return undefined;
  if (!reviewers.every((r) => typeof r === 'string' && r.startsWith('user:'))) return undefined;
  const users = new Set(reviewers).size;
  return minApprovals > users ? `must be at most ${users}, the reviewers listed` : undefined;
}

/** An escalation after the approval's deadline would never happen: refused at save. */
function escalateIssue(step: Record<string, unknown>): string | undefined {
  const { timeoutSeconds, escalate } = step as { timeoutSeconds?: unknown; escalate?: { afterSeconds?: unknown } };
  if (typeof timeoutSeconds !== 'number' || typeof escalate?.afterSeconds !== 'number') return undefined;
  return escalate.afterSeconds < timeoutSeconds ? undefined : `must be less than timeoutSeconds (${timeoutSeconds})`;
}

/**
 * `manual_approval`: the run waits (WAITING_APPROVAL, no worker) for its reviewers' decision, its
 * deadline or a cancel. The approval is written with the wait; the decision is applied by the run's
 * worker (`../waits.ts`), the approvals module decides (`../decisions.ts`).
 */
export const manualApprovalStep: LeafStepModule<'manual_approval', typeof ManualApprovalStep> = {
  type: 'manual_approval',
  schema: ManualApprovalStep,
  externalEffect: false,
  budgetMs: () => 2_000,
  asksPeople: true,
  mock: ApprovalMock,
  issues: (step) => {
    const issues: Issue[] = [];
    const quorum = quorumIssue(step);
    if (quorum) issues.push({ path: ['minApprovals'], message: quorum });
    const late = escalateIssue(step);
    if (late) issues.push({ path: ['escalate', 'afterSeconds'], message: late });
    return issues;
  },
  run: stepFault((step, ctx) => manualApproval(step, ctx)),
};

async function manualApproval(step: ManualApprovalStep, ctx: StepContext): Promise<Wait> {
  const { execution: e, now } = ctx;
  const form = step.form
    ? await Promise.all(
        step.form.map(async (f) => ({
          ...f,
          ...(f.default !== undefined ? { default: await evaluateTemplate(f.default, ctx.scope) } : {}),
        })),
      )
    : undefined;
  const description = step.description === undefined ? undefined : asText(await evaluateTemplate(step.description, ctx.scope));
  const approval: Approval = {
    approvalId: newId('ap'),
    accountId: e.accountId,
    executionId: e.executionId,
    workflowId: e.workflowId,
    stepId: step.id,
    status: 'PENDING',
    title: asText(await evaluateTemplate(step.title, ctx.scope)),
    description,
    reviewers: step.reviewers,
    ...((step.minApprovals ?? 1) > 1 ? { minApprovals: step.minApprovals, approvals: 0, approvedBy: [] } : {}),
    workflowVersion: e.workflowVersion,
    form,
    onTimeout: step.onTimeout,
    onReject: step.onReject,
    expiresAt: step.timeoutSeconds ? now + step.timeoutSeconds * 1000 : undefined,
    createdAt: now,
    // Reminders and escalation, done by the scheduled sweep (shared/domain/nudges.ts).
    ...(step.remind ? { remind: step.remind, reminders: 0, nextRemindAt: now + step.remind.everySeconds * 1000 } : {}),
    ...(step.escalate ? { escalate: { at: now + step.escalate.afterSeconds * 1000, reviewers: step.escalate.reviewers } } : {}),
  };
  const a = ctx.loop ? { ...approval, loop: { stepId: ctx.loop.stepId, index: ctx.loop.iteration, item: ctx.loop.item } } : approval;
  const links = {
    approve: link(APPROVAL_LINK_PATH, { approvalId: a.approvalId, decision: 'approve' }, '?api_key={API_KEY}'),
    reject: link(APPROVAL_LINK_PATH, { approvalId: a.approvalId, decision: 'reject' }, '?api_key={API_KEY}'),
  };
  const data = {
    approvalId: a.approvalId,
    stepId: step.id,
    title: a.title,
    reviewers: a.reviewers,
    form: a.form ?? null,
    expiresAt: a.expiresAt ?? null,
    links,
    ...(a.loop ? { loop: a.loop } : {}),
  };
  return {
    kind: 'wait',
    status: 'WAITING_APPROVAL',
    update: { approvalId: a.approvalId },
    event: { type: 'approval.requested', data },
    // The approval keeps the seq of its approval.requested: its votes are numbered after it (VOTE_ROOM).
    items: (runSeq) => [approvalPut({ ...a, runSeq }), ...nudgePut(a)],
  };
}
