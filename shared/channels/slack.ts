import { config } from '../config.ts';
import { link, SLACK_INTERACTIONS_PATH } from '../links.ts';
import { parseRetryAfter } from '../retry-after.ts';
import {
  type ApprovalCard,
  type ChannelAdapter,
  type ChannelKind,
  fieldLines,
  MASK,
  type OpenChannel,
  outcome,
  progress,
  type SendResult,
} from './types.ts';

/** Slack answers within its own limits; a send that takes longer is retried by the queue. */
const TIMEOUT_MS = 5_000;
/** Block Kit's limits: a header's text, a section's text. */
const HEADER_MAX = 150;
const TEXT_MAX = 3000;
const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

type SlackAnswer = SendResult & { body?: Record<string, unknown> };

/**
 * One Web API call (`SLACK_API_URL`/method) with the bot token: JSON for the write methods, a query
 * for the read ones (users.info, users.lookupByEmail take no JSON body). Slack answers 200 with
 * `ok: false` and an `error` for its refusals, 429 with `Retry-After` when rate-limited.
 */
export async function slackApi(token: string, method: string, args: Record<string, unknown>, read = false): Promise<SlackAnswer> {
  const base = config().SLACK_API_URL.replace(/\/$/, '');
  const query = read ? `?${new URLSearchParams(args as Record<string, string>)}` : '';
  try {
    const res = await fetch(`${base}/${method}${query}`, {
      method: read ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(read ? {} : { 'content-type': 'application/json; charset=utf-8' }) },
      ...(read ? {} : { body: JSON.stringify(args) }),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (res.status === 429)
      return { ok: false, status: 429, error: 'ratelimited', retryAfterSeconds: parseRetryAfter(res.headers.get('retry-after')) || 30 };
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status >= 300 || body.ok !== true)
      return { ok: false, status: res.status, error: typeof body.error === 'string' ? body.error : `HTTP ${res.status}`, body };
    return { ok: true, status: res.status, body };
  } catch (e) {
    return { ok: false, error: (e as Error).name === 'TimeoutError' ? 'timeout' : (e as Error).message };
  }
}

/** The Block Kit message of an approval: pending ones carry Approve/Reject buttons (decided in Slack) and a Review link. */
export function render(card: ApprovalCard) {
  const done = outcome(card);
  const context = [
    `Workflow *${card.workflowName ?? card.workflowId}*`,
    `run \`${card.executionId}\``,
    `step \`${card.stepId}\``,
    `approval \`${card.approvalId}\``,
  ].join(' · ');
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: cut(card.title, HEADER_MAX) } },
    ...(card.description ? [{ type: 'section', text: { type: 'mrkdwn', text: cut(card.description, TEXT_MAX) } }] : []),
    { type: 'context', elements: [{ type: 'mrkdwn', text: context }] },
    ...(card.fields.length
      ? [
          {
            type: 'section',
            fields: fieldLines(card)
              .slice(0, 10)
              .map((l) => ({ type: 'mrkdwn', text: cut(l, 2000) })),
          },
        ]
      : []),
    ...(card.minApprovals > 1 ? [{ type: 'context', elements: [{ type: 'mrkdwn', text: `Quorum: ${progress(card)}` }] }] : []),
  ];
  if (done) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `*${done}*` } });
  else
    blocks.push({
      type: 'actions',
      block_id: `approval:${card.approvalId}`,
      elements: [
        { type: 'button', action_id: 'approve', style: 'primary', value: card.approvalId, text: { type: 'plain_text', text: 'Approve' } },
        { type: 'button', action_id: 'reject', style: 'danger', value: card.approvalId, text: { type: 'plain_text', text: 'Reject' } },
        { type: 'button', action_id: 'review', url: card.links.review, text: { type: 'plain_text', text: 'Review' } },
      ],
    });
  return { text: done ? `${card.title}: ${done}` : `Approval needed: ${card.title}`, blocks };
}

const withRef = (r: SlackAnswer): SendResult => {
  const { body, ...result } = r;
  return r.ok ? { ...result, ref: { channel: body?.channel as string, ts: body?.ts as string } } : result;
};

export const slackKind: ChannelKind<'slack'> = {
  type: 'slack',
  settings: { botToken: true, signingSecret: true, defaultChannel: false },
  secrets: { botToken: (v) => `${MASK}${v.slice(-4)}`, signingSecret: () => MASK },
  conversations: true,
  view: (c) => ({
    defaultChannel: c.defaultChannel ?? null,
    interactionsUrl: link(SLACK_INTERACTIONS_PATH, { channelId: c.channelId }),
  }),
};

export const slack: ChannelAdapter<'slack'> = {
  kind: slackKind,
  conversation: (ch, to) => {
    const conversation = typeof to === 'string' ? to : to === undefined ? ch.defaultChannel : undefined;
    return conversation ? { key: `conversation:${conversation}`, to: conversation } : undefined;
  },
  // The recorded Slack user id, else the user Slack finds for the email.
  reviewer: async (ch, u) => {
    if (u.slackUserId) return { ok: true, to: u.slackUserId };
    const { userId, ...found } = await slackUserByEmail(ch, u.email);
    return userId ? { ...found, to: userId } : found;
  },
  render,
  send: async (ch, to, card) => withRef(await slackApi(token(ch), 'chat.postMessage', { channel: to, ...render(card) })),
  update: async (ch, ref, card) => withRef(await slackApi(token(ch), 'chat.update', { channel: ref.channel, ts: ref.ts, ...render(card) })),
  test: async (ch, to) => {
    const channel = to ?? ch.defaultChannel;
    if (!channel) return { ok: false, error: "no conversation: send `to` or set the channel's defaultChannel" };
    return withRef(await slackApi(token(ch), 'chat.postMessage', { channel, text: `Flowgate test message from channel ${ch.name}.` }));
  },
};

const token = (ch: OpenChannel) => ch.botToken ?? '';

/** A Slack user's email (users.info, scope users:read.email), for mapping them to a member. */
export async function slackUserEmail(ch: OpenChannel, userId: string): Promise<string | undefined> {
  const r = await slackApi(token(ch), 'users.info', { user: userId }, true);
  const email = (r.body?.user as { profile?: { email?: unknown } } | undefined)?.profile?.email;
  return r.ok && typeof email === 'string' ? email : undefined;
}

/** A member's Slack user id by their email (users.lookupByEmail), for a direct message. */
export async function slackUserByEmail(ch: OpenChannel, email: string): Promise<SendResult & { userId?: string }> {
  const r = await slackApi(token(ch), 'users.lookupByEmail', { email }, true);
  const id = (r.body?.user as { id?: unknown } | undefined)?.id;
  const { body: _, ...result } = r;
  return r.ok && typeof id === 'string' ? { ...result, userId: id } : result;
}

/** Post to an interaction's `response_url` (valid 30 minutes, 5 uses): replace the message, or an ephemeral note. */
export async function respondToSlack(responseUrl: string, message: Record<string, unknown>): Promise<boolean> {
  try {
    const res = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(1_500),
    });
    return res.ok;
  } catch {
    return false;
  }
}
