import { config } from '../config.ts';
import { link, SLACK_INTERACTIONS_PATH } from '../links.ts';
import { logger } from '../logger.ts';
import { parseRetryAfter } from '../retry-after.ts';
import {
  actions,
  context,
  fields,
  header,
  SLACK_LIMITS,
  type SlackMessage,
  SlackText,
  section,
  slackMessage,
  slackText,
} from './slack-text.ts';
import {
  type ApprovalCard,
  type ChannelAdapter,
  type ChannelKind,
  formFields,
  MASK,
  type MessageRef,
  type OpenChannel,
  outcome,
  progress,
  type SendResult,
} from './types.ts';

/** Slack answers within its own limits; a send that takes longer is retried by the queue. */
const TIMEOUT_MS = 5_000;
/** Slack waits 3 seconds for the answer to an interaction; its `response_url` gets a part of them. */
const RESPOND_TIMEOUT_MS = 1_500;

type SlackAnswer = SendResult & { body?: Record<string, unknown> };

/**
 * One Web API call (`SLACK_API_URL`/method) with the bot token: JSON for the write methods, a query
 * for the read ones (users.info, users.lookupByEmail take no JSON body). Slack answers 200 with
 * `ok: false` and an `error` for its refusals, 429 with `Retry-After` when rate-limited.
 */
async function slackApi(token: string, method: string, args: Record<string, unknown>, read = false): Promise<SlackAnswer> {
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

/**
 * The Block Kit message of an approval: pending ones carry Approve/Reject buttons (decided in Slack)
 * and a Review link. Every text in it is a `SlackText` (./slack-text.ts): what the run and the
 * definition put in it (title, description, workflow name, fields, who decided) arrives escaped,
 * and within Block Kit's limits.
 */
export function render(card: ApprovalCard): SlackMessage {
  const done = outcome(card);
  const orElse = slackText`Approval of step ${card.stepId}`;
  const given = SlackText.of(card.title);
  const title = (given.blank ? orElse : given).cut(SLACK_LIMITS.header);
  const description = SlackText.of(card.description ?? '');
  const form = formFields(card);
  const hidden = form.length - SLACK_LIMITS.fields;
  const blocks = [
    header(title, orElse),
    ...(description.blank ? [] : [section(description)]),
    context(
      slackText`Workflow *${card.workflowName ?? card.workflowId}* · run \`${card.executionId}\` · step \`${card.stepId}\` · approval \`${card.approvalId}\``,
    ),
    ...(form.length ? [fields(form.map((f) => slackText`${f.label}: ${f.value}`))] : []),
    ...(hidden > 0
      ? [context(slackText`${hidden} more field${hidden === 1 ? '' : 's'} not shown here${done ? '' : ': *Review* shows them all'}.`)]
      : []),
    ...(card.minApprovals > 1 ? [context(slackText`Quorum: ${progress(card)}`)] : []),
    done
      ? section(slackText`*${done}*`)
      : actions(`approval:${card.approvalId}`, [
          { action_id: 'approve', style: 'primary', value: card.approvalId, text: slackText`Approve` },
          { action_id: 'reject', style: 'danger', value: card.approvalId, text: slackText`Reject` },
          { action_id: 'review', url: card.links.review, text: slackText`Review` },
        ]),
  ];
  return slackMessage(done ? slackText`${title}: ${done}` : slackText`Approval needed: ${title}`, blocks);
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
  send: (ch, to, card) => postSlackMessage(ch, to, render(card)),
  update: (ch, ref, card) => updateSlackMessage(ch, ref, render(card)),
  test: async (ch, to) => {
    const channel = to ?? ch.defaultChannel;
    if (!channel) return { ok: false, error: "no conversation: send `to` or set the channel's defaultChannel" };
    return postSlackMessage(ch, channel, slackMessage(slackText`Flowgate test message from channel ${ch.name}.`));
  },
};

const token = (ch: OpenChannel) => ch.botToken ?? '';

/** Post a message to a conversation or user (chat.postMessage). */
export const postSlackMessage = async (ch: OpenChannel, to: string, message: SlackMessage) =>
  withRef(await slackApi(token(ch), 'chat.postMessage', { channel: to, ...message }));

/** Edit a posted message in place (chat.update). */
export const updateSlackMessage = async (ch: OpenChannel, ref: MessageRef, message: SlackMessage) =>
  withRef(await slackApi(token(ch), 'chat.update', { channel: ref.channel, ts: ref.ts, ...message }));

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

/** What a `response_url` post does to the clicked message: replace it, or add a note only the clicker sees. */
export type SlackResponse = { replace_original: true } | { response_type: 'ephemeral'; replace_original: false };

/**
 * Post to an interaction's `response_url` (valid 30 minutes, 5 uses). The URL comes in the request,
 * so it is used only when its host is Slack's own (SLACK_RESPONSE_HOSTS: `hooks.slack.com`), and
 * then under the egress rules of `http_request` (shared/egress/: no private, loopback or metadata
 * address, every redirect checked, host and address alike). Anything else is never contacted:
 * false, and the caller edits the message with chat.update instead.
 */
export async function respondToSlack(responseUrl: string, message: SlackMessage, how: SlackResponse): Promise<boolean> {
  const hosts = config().SLACK_RESPONSE_HOSTS;
  const slackHost = (hostname: string) => hosts.includes(hostname.toLowerCase().replace(/\.$/, ''));
  let url: URL;
  try {
    url = new URL(responseUrl);
  } catch {
    return false;
  }
  const host = url.hostname.slice(0, 100);
  if (!slackHost(url.hostname)) {
    logger.warn("a Slack interaction's response_url names a host not Slack's: not posted", { host });
    return false;
  }
  try {
    // Loaded on first use: the routes that only read `slackKind` bundle no egress.
    const { performHttpRequest } = await import('../egress/http.ts');
    const res = await performHttpRequest(
      {
        method: 'POST',
        url: url.href,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ ...how, ...message }),
        timeoutMs: RESPOND_TIMEOUT_MS,
      },
      { allowlist: config().HTTP_STEP_ALLOWLIST, maxResponseBytes: 16 * 1024, maxRedirects: 2, hostAllowed: slackHost },
    );
    return res.status >= 200 && res.status < 300;
  } catch (e) {
    logger.warn("a Slack interaction's response_url was not posted", { host, code: (e as { code?: string }).code ?? 'ERROR' });
    return false;
  }
}
