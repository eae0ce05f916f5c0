import { decodeTime } from 'ulid';
import * as z from 'zod';
import { type Approval, getApproval } from '../db/entities/approval.ts';
import { listApprovalMessages } from '../db/entities/approval-message.ts';
import { getChannelByName } from '../db/entities/channel.ts';
import { getExecution } from '../db/entities/execution.ts';
import { getUser } from '../db/entities/user.ts';
import { openChannel } from '../domain/channels.ts';
import type { ApprovalNotice } from '../engine/notify.ts';
import { runDefinition } from '../engine/versions.ts';
import { everyStep } from '../engine/every-step.ts';
import { logger } from '../logger.ts';
import { shows } from './card.ts';
import { recipients } from './recipients.ts';
import { sendPlan } from './send-plan.ts';

/**
 * An approval notice (send, remind, escalate, update: shared/engine/notify.ts) is planned here into
 * its messages, each one delivery of its own in the delivery log (shared/notifications/senders.ts):
 * one per notify entry and recipient, or one per sent message to bring up to date. Planning only
 * reads; the messages are sent by `sendApprovalJob` (./approval-messages.ts).
 */

/** What an approval message is for; the delivery log's `kind` is `approval-<purpose>`. */
export const PURPOSES = ['request', 'reminder', 'escalation', 'update', 'outcome'] as const;
export type Purpose = (typeof PURPOSES)[number];

const Reviewer = z.object({ userId: z.string(), email: z.string() });

/** One approval message to send or bring up to date: a delivery's payload, kept for its retries and redelivery. */
export const ApprovalJob = z.object({
  accountId: z.string(),
  executionId: z.string(),
  approvalId: z.string(),
  purpose: z.enum(PURPOSES),
  /** The stored message's key (shared/db/entities/approval-message.ts): one per entry and recipient. */
  key: z.string(),
  channelId: z.string(),
  channelName: z.string(),
  channelType: z.string(),
  /** The conversation or address; absent when the reviewer's address could not be found yet (found again on a retry). */
  to: z.string().optional(),
  reviewer: Reviewer.optional(),
  /** A reminder's or escalation's title prefix. */
  titlePrefix: z.string().optional(),
});
export type ApprovalJob = z.infer<typeof ApprovalJob>;

/**
 * Where a message goes, as the delivery log shows it: the channel's name and the recipient as its
 * adapter names it (a Teams chat is `webhook`: the URL, which holds its secret, is never a recipient).
 */
export const jobTarget = (j: Pick<ApprovalJob, 'channelName' | 'to' | 'reviewer'>) =>
  `${j.channelName}: ${j.to ?? `member ${j.reviewer?.userId ?? '?'}`}`;

/**
 * A message's delivery id: the same for every copy of its notice (a queue duplicate plans the same
 * deliveries, which are then sent once), sorting by the notice's time.
 */
export function jobDeliveryId(noticeId: string | undefined, notice: ApprovalNotice, key: string, id: (seed: string, at: number) => string) {
  const seed = noticeId ?? `${notice.approvalId}#${notice.action}#${notice.reminder ?? 0}`;
  // Not one of our ids (a notice queued without one): a fixed time, so its copies still agree.
  let at = 0;
  if (noticeId?.startsWith('dl_'))
    try {
      at = decodeTime(noticeId.slice(3).toUpperCase());
    } catch {
      at = 0;
    }
  return id(`${seed}#${key}`, at);
}

/** The messages of one notice: none when there is nothing to send (a reminder of an approval decided since). */
export async function planNotice(m: ApprovalNotice): Promise<ApprovalJob[]> {
  const approval = await getApproval(m.accountId, m.approvalId);
  if (!approval) {
    logger.warn('approval notice dropped: no such approval', { approvalId: m.approvalId });
    return [];
  }
  return m.action === 'update' ? planUpdates(approval) : planSends(approval, m);
}

async function planSends(approval: Approval, m: ApprovalNotice): Promise<ApprovalJob[]> {
  const execution = await getExecution(approval.accountId, approval.executionId);
  const definition = execution && (await runDefinition(execution));
  // An approval inside a for_each is one of its nested steps.
  const step = definition && everyStep(definition).find((s) => s.id === approval.stepId);
  const plan = sendPlan(m, approval, step);
  if (!plan) return [];
  const purpose: Purpose = m.action === 'remind' ? 'reminder' : m.action === 'escalate' ? 'escalation' : 'request';
  const base = { accountId: approval.accountId, executionId: approval.executionId, approvalId: approval.approvalId, purpose };
  const jobs: ApprovalJob[] = [];
  for (const [index, entry] of plan.entries.entries()) {
    const channel = await getChannelByName(approval.accountId, entry.channel);
    if (!channel) {
      logger.warn('approval message not sent: the channel is gone', { approvalId: approval.approvalId, channel: entry.channel });
      continue;
    }
    const at = { channelId: channel.channelId, channelName: channel.name, channelType: channel.type };
    for (const r of await recipients(await openChannel(channel), entry, plan.audience)) {
      if (r.reviewer && plan.skip.has(r.reviewer.userId)) continue;
      jobs.push({
        ...base,
        ...at,
        key: `${plan.prefix}${index}#${r.key}`,
        ...(r.to ? { to: r.to } : {}),
        ...(r.reviewer ? { reviewer: r.reviewer } : {}),
        ...(plan.titlePrefix ? { titlePrefix: plan.titlePrefix } : {}),
      });
    }
  }
  return jobs;
}

async function planUpdates(approval: Approval): Promise<ApprovalJob[]> {
  const now = shows(approval);
  const messages = (await listApprovalMessages(approval.accountId, approval.approvalId)).filter((x) => x.shows !== now);
  const purpose: Purpose = approval.status === 'PENDING' ? 'update' : 'outcome';
  return Promise.all(
    messages.map(async (message): Promise<ApprovalJob> => {
      const reviewer = message.userId ? await getUser(approval.accountId, message.userId) : undefined;
      return {
        accountId: approval.accountId,
        executionId: approval.executionId,
        approvalId: approval.approvalId,
        purpose,
        key: message.key,
        channelId: message.channelId,
        channelName: message.channelName ?? message.channelType,
        channelType: message.channelType,
        to: message.to,
        ...(reviewer ? { reviewer: { userId: reviewer.userId, email: reviewer.email } } : {}),
      };
    }),
  );
}
