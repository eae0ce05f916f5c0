import * as z from 'zod';
import { Reviewer } from './common.ts';

/**
 * The channel side of a `manual_approval` (`notify`, `remind`, `escalate`), apart from the step module:
 * the channel schemas read the names and conversations without the step's code.
 */

/** A channel's name in its account (`POST /api/channels`): what an approval's `notify` refers to. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const ChannelName = z.string().regex(CHANNEL_NAME, 'must be 1-64 letters, digits, _, . or -, starting with a letter or digit');
/** A Slack conversation: `#name` or a channel id (C…, G…, D…). */
export const SLACK_CONVERSATION = /^#[a-z0-9][a-z0-9._-]{0,79}$|^[CGD][A-Z0-9]{4,}$/;
/**
 * Who an approval's message goes to on one channel: a Slack conversation (`#deploys`), or reviewers
 * (`user:<id>`, `role:<role>`) mailed or messaged one by one. Absent: Slack's default channel (else
 * the step's reviewers), the step's reviewers by email, the Teams webhook's chat. Checked against the
 * account's channels when the workflow is saved (shared/domain/workflows.ts).
 */
export const ApprovalNotify = z.strictObject({
  channel: ChannelName,
  to: z
    .union([
      z.string().regex(SLACK_CONVERSATION, 'must be a Slack channel (#name or its id) or a list of reviewers'),
      z.array(Reviewer).min(1).max(50),
    ])
    .optional(),
});

/** `remind`: every `everySeconds` (at least a minute, the sweep's period) while pending, `max` times at most. */
export const ApprovalRemind = z.strictObject({
  everySeconds: z.number().int().min(60).max(604_800),
  max: z.number().int().min(1).max(20),
});
/** `escalate`: `afterSeconds` after the request, `reviewers` may decide too and are told through `notify`. */
export const ApprovalEscalate = z.strictObject({
  afterSeconds: z.number().int().min(60).max(2_592_000),
  reviewers: z.array(Reviewer).min(1).max(50),
  notify: z.array(ApprovalNotify).min(1).max(10).optional(),
});
export type ApprovalNotify = z.infer<typeof ApprovalNotify>;
export type ApprovalRemind = z.infer<typeof ApprovalRemind>;
export type ApprovalEscalate = z.infer<typeof ApprovalEscalate>;
