import * as z from 'zod';
import { ChannelType } from '../db/channel-types.ts';
import { ApprovalStatus } from '../db/entities/approval.ts';
import { idOf } from './common.ts';

export const Comment = z.string().max(2000, 'at most 2,000 characters');

/** The spec's POST body; `decision` is checked by the handler so a bad word is `INVALID_DECISION`. */
export const DecisionBody = z.object({ approvalId: z.string().min(1).max(64), decision: z.string().max(64), comment: Comment.optional() });

export const LinkParams = z.object({ approvalId: idOf('APPROVAL_NOT_FOUND', 'Approval'), decision: z.string().max(64) });
export const LinkQuery = z.object({ api_key: z.string().optional(), comment: Comment.optional(), confirm: z.string().max(8).optional() });

export const ApprovalParams = z.object({ approvalId: idOf('APPROVAL_NOT_FOUND', 'Approval') });
export const ApprovalsQuery = z.object({
  status: ApprovalStatus.default('PENDING'),
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().max(4096).optional(),
});
/** How the console's inbox orders its rows: the listing's own order (oldest first), or deadline soonest (none last). */
export const INBOX_SORTS = ['oldest', 'deadline'] as const;
/** What became of each approval of a bulk decision from the inbox (shared/domain/approval-inbox.ts), counted in its summary. */
export const BULK_OUTCOMES = ['approved', 'voted', 'rejected', 'handled', 'refused', 'needsform', 'failed'] as const;

export const ApproveBody = z.object({ comment: Comment.optional(), formData: z.record(z.string(), z.unknown()).optional() });
export const RejectBody = z.object({ comment: Comment.optional() });

export const DecisionResult = z.object({ ok: z.literal(true), approvalId: z.string(), decision: z.enum(['approve', 'reject']) });
export const ApprovalView = z
  .object({
    approvalId: z.string(),
    executionId: z.string(),
    workflowId: z.string(),
    stepId: z.string(),
    status: ApprovalStatus,
    title: z.string(),
    description: z.string().optional(),
    reviewers: z.array(z.string()),
    form: z
      .array(
        z.object({
          name: z.string(),
          type: z.string(),
          label: z.string().optional(),
          required: z.boolean(),
          default: z.unknown().optional(),
          enum: z.array(z.unknown()).optional(),
        }),
      )
      .optional(),
    expiresAt: z.number().optional(),
    /** Inside a `for_each`: the loop step and the iteration (index, item) this approval is for. */
    loop: z.object({ stepId: z.string(), index: z.number(), item: z.unknown() }).optional(),
    createdAt: z.number(),
    /** Distinct reviewers who must approve; one rejection rejects. */
    minApprovals: z.number(),
    /** Approving decisions so far. */
    approvals: z.number(),
    decision: z.enum(['approve', 'reject']).optional(),
    comment: z.string().nullable().optional(),
    decidedBy: z.string().optional(),
    decidedAt: z.number().optional(),
    history: z.array(z.record(z.string(), z.unknown())).optional(),
    /** Detail only: every decision so far (a quorum's votes), oldest first. */
    decisions: z
      .array(
        z.object({
          decidedBy: z.string(),
          decision: z.enum(['approve', 'reject']).nullable(),
          channel: z.string(),
          at: z.number(),
          comment: z.string().nullable(),
        }),
      )
      .optional(),
    /** Detail only: the users who may still decide (none once it is handled). */
    pendingReviewers: z.array(z.string()).optional(),
    /** Detail only: every message sent for the approval (request, reminders, escalation), oldest first. */
    notifications: z
      .array(
        z.object({
          kind: z.enum(['request', 'reminder', 'escalation']),
          reminder: z.number().optional(),
          channelId: z.string(),
          channelType: ChannelType,
          to: z.string(),
          userId: z.string().nullable(),
          sentAt: z.number(),
        }),
      )
      .optional(),
    /** Detail only, with the step's `remind`: reminders sent, and when the next is due (null: none left). */
    reminders: z.object({ everySeconds: z.number(), max: z.number(), sent: z.number(), nextAt: z.number().nullable() }).optional(),
    /** Detail only, with the step's `escalate`: when, to whom, and when it happened (null: not yet). */
    escalation: z.object({ at: z.number(), reviewers: z.array(z.string()), escalatedAt: z.number().nullable() }).optional(),
    /** Detail only: the run's status, trigger and variables. */
    context: z
      .object({ executionStatus: z.string(), trigger: z.string(), variables: z.record(z.string(), z.unknown()) })
      .nullable()
      .optional(),
  })
  .meta({ id: 'Approval' });
export const ApprovalList = z.object({ items: z.array(ApprovalView), nextCursor: z.string().nullable() });

/** `approve` / `reject`, any case; undefined for anything else. */
export const parseDecision = (s: string) => {
  const d = s.toLowerCase();
  return d === 'approve' || d === 'reject' ? d : undefined;
};
