import { createHmac, timingSafeEqual } from 'node:crypto';
import { decisionAudit } from '../db/audited.ts';
import { writeAll } from '../db/transact.ts';
import { auditPut, getApproval, newAuditId } from '../db/entities/approval.ts';
import { type Channel, getChannelById } from '../db/entities/channel.ts';
import { listUsers, type User } from '../db/entities/user.ts';
import { getWorkflow } from '../db/entities/workflow.ts';
import { render, respondToSlack, slackKind, slackUserEmail, updateSlackMessage } from '../channels/slack.ts';
import { type SlackText, slackMessage, slackText } from '../channels/slack-text.ts';
import type { OpenChannel } from '../channels/types.ts';
import { AppError, notFound, unauthorized } from '../errors.ts';
import { HTTP_STATUS } from '../http-status.ts';
import { logger } from '../logger.ts';
import { decide } from '../domain/approvals.ts';
import { openChannel } from '../domain/channels.ts';
import { approvalCard } from './card.ts';
import * as z from 'zod';

/** Slack's replay window: a request signed more than 5 minutes ago (or ahead) is refused. */
export const SLACK_MAX_SKEW_SECONDS = 300;

const refusedSignature = () =>
  unauthorized('INVALID_SLACK_SIGNATURE', 'The request is not signed by Slack with this channel’s signing secret.');

/** Slack's v0 signature of `raw` at `timestamp` (hex HMAC-SHA256 of `v0:<timestamp>:<body>`). */
export const slackSignature = (secret: string, timestamp: string, raw: string) =>
  `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;

/** Constant-time check of Slack's signature headers over the raw body, within ±5 minutes of `now`. */
export function verifySlackSignature(secret: string, headers: Record<string, string | undefined>, raw: string, now = Date.now()): boolean {
  const timestamp = headers['x-slack-request-timestamp'] ?? '';
  const given = Buffer.from(headers['x-slack-signature'] ?? '');
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > SLACK_MAX_SKEW_SECONDS) return false;
  const expected = Buffer.from(slackSignature(secret, timestamp, raw));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** What we read of Slack's `block_actions` payload (it carries much more; any other shape is ignored). */
const BlockActions = z.object({
  type: z.string().optional(),
  user: z.object({ id: z.string().optional() }).optional(),
  response_url: z.string().optional(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
  channel: z.object({ id: z.string().optional() }).optional(),
  message: z.object({ ts: z.string().optional() }).optional(),
  actions: z.array(z.object({ action_id: z.string().optional(), value: z.string().optional() })).optional(),
});

const parsePayload = (raw: string) => {
  try {
    return BlockActions.safeParse(JSON.parse(new URLSearchParams(raw).get('payload') ?? '{}')).data;
  } catch {
    return undefined;
  }
};

/**
 * A Slack app's interactivity request for one channel: the signature is checked against that
 * channel's signing secret before anything of the request is read (401 otherwise; a channel that is
 * not one of Slack is 404, as a malformed id is). An Approve/Reject click by a member who is a reviewer decides
 * through `decide` (channel `slack`: quorum, exactly once, audited), then the message shows the
 * outcome (or the quorum's progress): its `response_url`, else `chat.update`. A refused click gets
 * an ephemeral explanation and changes nothing.
 */
export async function slackInteraction(
  channelId: string,
  req: { headers: Record<string, string | undefined>; raw: string; sourceIp: string; userAgent?: string },
  now = Date.now(),
): Promise<void> {
  const channel = await getChannelById(channelId);
  if (channel?.type !== slackKind.type) throw notFound('CHANNEL_NOT_FOUND', `Channel ${channelId} does not exist.`);
  const open = await openChannel(channel);
  if (!open.signingSecret || !verifySlackSignature(open.signingSecret, req.headers, req.raw, now)) throw refusedSignature();
  const payload = parsePayload(req.raw);
  if (!payload) return;
  const action = payload.actions?.[0];
  // URL buttons (Review) report their clicks too; nothing to do for them, nor for other interactions.
  if (payload.type !== 'block_actions' || (action?.action_id !== 'approve' && action?.action_id !== 'reject')) return;
  const tell = (text: SlackText) =>
    payload.response_url
      ? respondToSlack(payload.response_url, slackMessage(text), { response_type: 'ephemeral', replace_original: false })
      : undefined;
  const approvalId = String(action.value ?? '').slice(0, 64);
  const slackUserId = payload.user?.id ?? '';
  const member = await memberOf(channel, open, slackUserId);
  if (!member) {
    await auditRefusal(channel.accountId, approvalId, slackUserId, req, now);
    return void (await tell(
      slackText`You are not a member of this Flowgate account (or your Slack user is not linked to one), so you cannot decide this approval.`,
    ));
  }
  try {
    const decided = await decide(
      {
        principal: { accountId: channel.accountId, userId: member.userId },
        approvalId,
        decision: action.action_id,
        channel: slackKind.type,
        sourceIp: req.sourceIp,
        userAgent: req.userAgent,
      },
      now,
    );
    const workflow = await getWorkflow(decided.accountId, decided.workflowId);
    const card = await approvalCard(decided, { decidedBy: member.email, ...(workflow ? { workflowName: workflow.name } : {}) }, open);
    const message = render(card);
    const replaced = payload.response_url ? await respondToSlack(payload.response_url, message, { replace_original: true }) : false;
    const where = {
      channel: payload.container?.channel_id ?? payload.channel?.id,
      ts: payload.container?.message_ts ?? payload.message?.ts,
    };
    if (!replaced && where.channel && where.ts) await updateSlackMessage(open, where, message);
  } catch (e) {
    if (!(e instanceof AppError) || e.kind === 'internal') throw e;
    const why: Record<string, SlackText> = {
      APPROVAL_NOT_FOUND: slackText`This approval was not found.`,
      NOT_A_REVIEWER: slackText`You are not a reviewer of this approval.`,
      APPROVAL_ALREADY_HANDLED: slackText`This approval was already handled.`,
      REVIEWER_ALREADY_DECIDED: slackText`You already decided this approval.`,
    };
    await tell(why[e.code] ?? slackText`Not decided: ${e.message}`);
  }
}

/**
 * The member a Slack user is: the one who recorded that Slack user id, else the one whose email
 * Slack gives for them (users.info, scope users:read.email) and who recorded no other id. Disabled
 * members are no one.
 */
async function memberOf(channel: Channel, open: OpenChannel, slackUserId: string): Promise<User | undefined> {
  if (!slackUserId) return undefined;
  const users = (await listUsers(channel.accountId)).filter((u) => !u.disabled);
  const recorded = users.find((u) => u.slackUserId === slackUserId);
  if (recorded) return recorded;
  const email = (await slackUserEmail(open, slackUserId))?.toLowerCase();
  return email ? users.find((u) => u.email.toLowerCase() === email && !u.slackUserId) : undefined;
}

/** A click by a Slack user who is no member, audited on the approval it named (when the account has it). */
async function auditRefusal(
  accountId: string,
  approvalId: string,
  slackUserId: string,
  req: { sourceIp: string; userAgent?: string },
  now: number,
) {
  if (!approvalId || !(await getApproval(accountId, approvalId))) return;
  const record = {
    auditId: newAuditId(now),
    approvalId,
    accountId,
    at: now,
    outcome: 'refused' as const,
    status: HTTP_STATUS.forbidden,
    code: 'NOT_A_MEMBER',
    comment: `Slack user ${slackUserId.slice(0, 32)}`,
    channel: slackKind.type,
    sourceIp: req.sourceIp,
    userAgent: req.userAgent?.slice(0, 512),
  };
  await writeAll([auditPut(record), decisionAudit(record)]).catch((error: unknown) =>
    logger.warn('refused Slack click not audited', { approvalId, error: (error as Error).name }),
  );
}
