import type { Approval } from '../db/entities/approval.ts';
import { getUser, listUsers, type User } from '../db/entities/user.ts';
import type { ApprovalNotify } from '../engine/steps/approval-notify.ts';
import { adapters } from '../channels/index.ts';
import type { ChannelAdapter, OpenChannel } from '../channels/types.ts';

/**
 * One recipient of an approval's message on one channel: a conversation, or a reviewer (their
 * address or Slack id; none when the provider could not find them: the send looks again).
 */
export type Recipient = { key: string; to?: string; reviewer?: { userId: string; email: string } };

/**
 * The enabled members `reviewers` name (`user:<id>`, `role:<role>`), each once. Disabled or removed
 * members get nothing.
 */
export async function reviewerUsers(accountId: string, reviewers: readonly string[]): Promise<User[]> {
  const named = reviewers.filter((r) => r.startsWith('user:')).map((r) => r.slice('user:'.length));
  const roles = reviewers.filter((r) => r.startsWith('role:')).map((r) => r.slice('role:'.length));
  const users = roles.length
    ? (await listUsers(accountId)).filter((u) => roles.includes(u.role) || named.includes(u.userId))
    : ((await Promise.all(named.map((id) => getUser(accountId, id)))).filter(Boolean) as User[]);
  return users.filter((u) => !u.disabled);
}

/**
 * Who one `notify` entry reaches: the conversation its channel's adapter names (a Slack
 * conversation: `to: "#deploys"`, else the channel's default one when `to` is absent; the Teams
 * webhook's chat), else the reviewers (`to` as a list, else the step's own) one by one, at the
 * address the adapter finds for each (their email; in Slack their recorded Slack user id, else the
 * user Slack finds for their email). A reviewer the adapter cannot find comes without `to`: their
 * message is a delivery of its own that looks again, and fails with the provider's answer.
 */
export async function recipients(
  channel: OpenChannel,
  entry: Pick<ApprovalNotify, 'to'>,
  approval: Pick<Approval, 'accountId' | 'reviewers'>,
): Promise<Recipient[]> {
  const adapter: ChannelAdapter = adapters[channel.type];
  const conversation = adapter.conversation(channel, entry.to);
  if (conversation) return [conversation];
  const users = await reviewerUsers(approval.accountId, Array.isArray(entry.to) ? entry.to : approval.reviewers);
  // One at a time: a provider's lookups are rate limited (Slack's users.lookupByEmail).
  const out: Recipient[] = [];
  for (const u of users) {
    const { to } = await adapter.reviewer(channel, u);
    out.push({ key: `user:${u.userId}`, ...(to ? { to } : {}), reviewer: { userId: u.userId, email: u.email } });
  }
  return out;
}
