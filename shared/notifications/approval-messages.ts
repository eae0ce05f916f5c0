import { type Approval, getApproval } from '../db/entities/approval.ts';
import { getApprovalMessage, markShown, putApprovalMessage } from '../db/entities/approval-message.ts';
import { getChannel } from '../db/entities/channel.ts';
import { getUser } from '../db/entities/user.ts';
import { getWorkflow } from '../db/entities/workflow.ts';
import { openChannel } from '../domain/channels.ts';
import { approvalCard, type CardContext, shows } from './card.ts';
import { adapters } from '../channels/index.ts';
import type { ApprovalJob } from './approval-plan.ts';
import type { ApprovalCard, ChannelAdapter, MessageRef, OpenChannel, SendResult } from '../channels/types.ts';

/** A failed send worth another try: no answer, a timeout, 429 or 5xx (a refusal such as `channel_not_found` is final). */
export const retryable = (r: SendResult) => !r.ok && (r.status === undefined || r.status === 429 || r.status >= 500);
const settled = (r: SendResult): SendResult => (r.ok || retryable(r) ? r : { ...r, final: true });

type MessageInput = {
  channel: OpenChannel;
  approval: Approval;
  context?: CardContext;
  reviewer?: { userId: string; email: string };
};

const adapter = (channel: OpenChannel): ChannelAdapter => adapters[channel.type];

/** The card of `approval` for `channel` (with `reviewer`'s own links when it is theirs), handed to its adapter. Never throws for a provider's fault. */
async function withCard(input: MessageInput, act: (card: ApprovalCard) => Promise<SendResult>): Promise<SendResult> {
  const card = await approvalCard(input.approval, input.context ?? {}, input.channel, input.reviewer);
  try {
    return await act(card);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/**
 * Send one approval message to `to` (a Slack conversation or user id, a mail address, the Teams
 * webhook). The provider's answer, with `ref` (where the message lives) when it was sent.
 */
export const sendApprovalMessage = (input: MessageInput & { to: string }) =>
  withCard(input, (card) => adapter(input.channel).send(input.channel, input.to, card));

/** Bring one sent message up to date with `approval` (outcome, who, when; no buttons once handled). */
export const updateApprovalMessage = (input: MessageInput & { ref: MessageRef }) =>
  withCard(input, (card) => adapter(input.channel).update(input.channel, input.ref, card));

/** The workflow's name and the decider's email, for the cards. */
async function cardContext(a: Approval): Promise<CardContext> {
  const [workflow, decider] = await Promise.all([
    getWorkflow(a.accountId, a.workflowId),
    a.decidedBy ? getUser(a.accountId, a.decidedBy) : undefined,
  ]);
  return { ...(workflow ? { workflowName: workflow.name } : {}), ...(decider ? { decidedBy: decider.email } : {}) };
}

const gone = (what: string): SendResult => ({ ok: false, final: true, error: `${what} no longer exists` });

/**
 * Send one approval message (./approval-plan.ts), or bring one sent message up to date: the
 * notifications worker's sender of `approval-*` deliveries (./senders.ts), once per attempt. A
 * message already sent (or already showing the approval as it is) answers ok without sending again,
 * unless this is a `redelivery` (on purpose: sent again, and the new message is the one kept up to
 * date). A reminder or an escalation of an approval handled since is `skipped`.
 */
export async function sendApprovalJob(
  job: ApprovalJob,
  { redelivery = false, memo }: { redelivery?: boolean; memo?: Map<string, Promise<unknown>> } = {},
  now = Date.now(),
): Promise<SendResult> {
  const once = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!memo) return load();
    if (!memo.has(key)) memo.set(key, load());
    return memo.get(key) as Promise<T>;
  };
  const [approval, opened, stored] = await Promise.all([
    once('approval', () => getApproval(job.accountId, job.approvalId)),
    once(`channel#${job.channelId}`, async () => {
      const channel = await getChannel(job.accountId, job.channelId);
      return channel && { channel, open: await openChannel(channel) };
    }),
    getApprovalMessage(job.accountId, job.approvalId, job.key),
  ]);
  if (!approval) return gone('the approval');
  if (!opened) return gone(`the channel ${job.channelName}`);
  const { channel, open } = opened;
  const context = await once('context', () => cardContext(approval));
  const reviewer = job.reviewer ? { reviewer: job.reviewer } : {};
  if (job.purpose === 'update' || job.purpose === 'outcome') {
    if (!stored) return gone('the message');
    if (stored.shows === shows(approval) && !redelivery) return { ok: true, ref: stored.ref };
    const result = await updateApprovalMessage({ channel: open, ref: stored.ref, approval, context, ...reviewer });
    if (result.ok) await markShown(stored, shows(approval));
    return settled(result);
  }
  if ((job.purpose === 'reminder' || job.purpose === 'escalation') && approval.status !== 'PENDING')
    return { ok: false, skipped: true, error: `not sent: the approval was ${approval.status.toLowerCase()} before its ${job.purpose}` };
  if (stored && !redelivery) return { ok: true, ref: stored.ref };
  const to = job.to ?? (await lookUp(open, job));
  if (typeof to !== 'string') return settled(to);
  const result = await sendApprovalMessage({
    channel: open,
    to,
    approval: job.titlePrefix ? { ...approval, title: `${job.titlePrefix}${approval.title}` } : approval,
    context,
    ...reviewer,
  });
  if (!result.ok) return settled(result);
  await putApprovalMessage(
    {
      accountId: job.accountId,
      approvalId: job.approvalId,
      key: job.key,
      channelId: channel.channelId,
      channelName: channel.name,
      channelType: channel.type,
      to,
      ...(job.reviewer ? { userId: job.reviewer.userId } : {}),
      ref: result.ref ?? {},
      sentAt: now,
      shows: shows(approval),
    },
    redelivery,
  );
  return result;
}

/** A reviewer's address the provider did not give when the notice was planned: asked again. */
async function lookUp(channel: OpenChannel, job: ApprovalJob): Promise<string | SendResult> {
  const user = job.reviewer && (await getUser(job.accountId, job.reviewer.userId));
  if (!user || user.disabled) return gone('the reviewer');
  const { to, ...found } = await adapter(channel).reviewer(channel, user);
  return to ?? found;
}
