import { type Approval, getApproval } from '../db/entities/approval.ts';
import { listApprovalMessages, markShown, putApprovalMessage } from '../db/entities/approval-message.ts';
import { type Channel, getChannel, getChannelByName } from '../db/entities/channel.ts';
import { getExecution } from '../db/entities/execution.ts';
import { getUser } from '../db/entities/user.ts';
import { getWorkflow } from '../db/entities/workflow.ts';
import { openChannel } from '../domain/channels.ts';
import type { ApprovalNotice } from '../engine/notify.ts';
import { runDefinition } from '../engine/versions.ts';
import { everyStep } from '../engine/every-step.ts';
import { logger } from '../logger.ts';
import { approvalCard, type CardContext, shows } from './card.ts';
import { adapters } from '../channels/index.ts';
import { recipients } from './recipients.ts';
import { sendPlan } from './send-plan.ts';
import type { ApprovalCard, ChannelAdapter, MessageRef, OpenChannel, SendResult } from '../channels/types.ts';

/** A failed send worth another try: no answer, a timeout, 429 or 5xx (a refusal such as `channel_not_found` is final). */
export const retryable = (r: SendResult) => !r.ok && (r.status === undefined || r.status === 429 || r.status >= 500);

/** Thrown so the queue tries the notice again (after `retryAfterSeconds`, when a provider said so). */
export class DeliveryRetry extends Error {
  override name = 'DeliveryRetry';
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

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

/**
 * The notify worker's part for approvals (off the run's path): `send` the messages of the step's
 * `notify` entries, each recipient once (a retry skips those recorded as sent); `update` every
 * message sent for the approval. A final refusal is logged and dropped; a fault worth retrying
 * (timeout, 429, 5xx) throws `DeliveryRetry` once the rest is done.
 */
export async function deliverApprovalNotice(m: ApprovalNotice, now = Date.now()): Promise<void> {
  const approval = await getApproval(m.accountId, m.approvalId);
  if (!approval) return void logger.warn('approval notice dropped: no such approval', { approvalId: m.approvalId });
  const context = await cardContext(approval);
  const retries = m.action === 'update' ? await updateAll(approval, context) : await sendAll(approval, context, now, m);
  if (retries.length)
    throw new DeliveryRetry(
      `${retries.length} approval message(s) to retry: ${retries.map((r) => r.error).join('; ')}`.slice(0, 500),
      Math.max(0, ...retries.map((r) => r.retryAfterSeconds ?? 0)) || undefined,
    );
}

async function sendAll(approval: Approval, context: CardContext, now: number, m: ApprovalNotice): Promise<SendResult[]> {
  const execution = await getExecution(approval.accountId, approval.executionId);
  const definition = execution && (await runDefinition(execution));
  // An approval inside a for_each is one of its nested steps.
  const step = definition && everyStep(definition).find((s) => s.id === approval.stepId);
  // The request's messages, a reminder's or an escalation's (./send-plan.ts).
  const plan = sendPlan(m, approval, step);
  if (!plan) return [];
  const { entries } = plan;
  const sent = new Set((await listApprovalMessages(approval.accountId, approval.approvalId)).map((x) => x.key));
  const retries: SendResult[] = [];
  for (const [index, entry] of entries.entries()) {
    const channel = await getChannelByName(approval.accountId, entry.channel);
    if (!channel) {
      logger.warn('approval message not sent: the channel is gone', { approvalId: approval.approvalId, channel: entry.channel });
      continue;
    }
    const open = await openChannel(channel);
    const { recipients: to, failed } = await recipients(open, entry, plan.audience);
    for (const f of failed) report(approval, channel, f.to, f, retries);
    for (const r of to) {
      const key = `${plan.prefix}${index}#${r.key}`;
      if (sent.has(key) || (r.reviewer && plan.skip.has(r.reviewer.userId))) continue;
      const result = await sendApprovalMessage({
        channel: open,
        to: r.to,
        approval: plan.titlePrefix ? { ...approval, title: `${plan.titlePrefix}${approval.title}` } : approval,
        context,
        ...(r.reviewer ? { reviewer: r.reviewer } : {}),
      });
      if (!result.ok) {
        report(approval, channel, r.to, result, retries);
        continue;
      }
      await putApprovalMessage({
        accountId: approval.accountId,
        approvalId: approval.approvalId,
        key,
        channelId: channel.channelId,
        channelType: channel.type,
        to: r.to,
        ...(r.reviewer ? { userId: r.reviewer.userId } : {}),
        ref: result.ref ?? {},
        sentAt: now,
        shows: shows(approval),
      });
    }
  }
  return retries;
}

async function updateAll(approval: Approval, context: CardContext): Promise<SendResult[]> {
  const messages = (await listApprovalMessages(approval.accountId, approval.approvalId)).filter((x) => x.shows !== shows(approval));
  const opened = new Map<string, Promise<{ channel?: Channel; open?: OpenChannel }>>();
  const open = (id: string) => {
    if (!opened.has(id))
      opened.set(
        id,
        getChannel(approval.accountId, id).then(async (channel) => (channel ? { channel, open: await openChannel(channel) } : {})),
      );
    return opened.get(id) as Promise<{ channel?: Channel; open?: OpenChannel }>;
  };
  const retries: SendResult[] = [];
  for (const message of messages) {
    const { channel, open: ch } = await open(message.channelId);
    if (!channel || !ch) continue;
    const reviewer = message.userId ? await getUser(approval.accountId, message.userId) : undefined;
    const result = await updateApprovalMessage({
      channel: ch,
      ref: message.ref,
      approval,
      context,
      ...(reviewer ? { reviewer: { userId: reviewer.userId, email: reviewer.email } } : {}),
    });
    if (result.ok) await markShown(message, shows(approval));
    else report(approval, channel, message.to, result, retries);
  }
  return retries;
}

function report(approval: Approval, channel: Pick<Channel, 'name' | 'type'>, to: string, r: SendResult, retries: SendResult[]) {
  const fields = { approvalId: approval.approvalId, channel: channel.name, type: channel.type, to, status: r.status, error: r.error };
  if (retryable(r)) {
    retries.push(r);
    logger.warn('approval message failed; will retry', fields);
  } else logger.warn('approval message refused by the provider', fields);
}
