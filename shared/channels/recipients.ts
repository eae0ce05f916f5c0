import type { Approval } from '../db/entities/approval.ts';
import { getUser, listUsers, type User } from '../db/entities/user.ts';
import type { ApprovalNotify } from '../engine/steps/approval-notify.ts';
import { slackUserByEmail } from './slack.ts';
import type { OpenChannel, SendResult } from './types.ts';

/** One recipient of an approval's message on one channel: a conversation, or a reviewer (their address or Slack id). */
export type Recipient = { key: string; to: string; reviewer?: { userId: string; email: string } };

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
 * Who one `notify` entry reaches: a Slack conversation (`to: "#deploys"`, else the channel's
 * default one when `to` is absent), the Teams webhook's chat, or the reviewers (`to` as a list,
 * else the step's own) one by one: by email, or in Slack by their recorded Slack user id, else the
 * user Slack finds for their email. A reviewer Slack cannot find is a failed send of its own.
 */
export async function recipients(
  channel: OpenChannel,
  entry: Pick<ApprovalNotify, 'to'>,
  approval: Pick<Approval, 'accountId' | 'reviewers'>,
): Promise<{ recipients: Recipient[]; failed: (SendResult & { to: string })[] }> {
  if (channel.type === 'teams') return { recipients: [{ key: 'teams', to: 'webhook' }], failed: [] };
  if (channel.type === 'slack') {
    const conversation = typeof entry.to === 'string' ? entry.to : entry.to === undefined ? channel.defaultChannel : undefined;
    if (conversation) return { recipients: [{ key: `conversation:${conversation}`, to: conversation }], failed: [] };
  }
  const users = await reviewerUsers(approval.accountId, Array.isArray(entry.to) ? entry.to : approval.reviewers);
  const out: Recipient[] = [];
  const failed: (SendResult & { to: string })[] = [];
  for (const u of users) {
    const reviewer = { userId: u.userId, email: u.email };
    if (channel.type === 'email') {
      out.push({ key: `user:${u.userId}`, to: u.email, reviewer });
      continue;
    }
    const found = u.slackUserId ? { ok: true, userId: u.slackUserId } : await slackUserByEmail(channel, u.email);
    if (found.userId) out.push({ key: `user:${u.userId}`, to: found.userId, reviewer });
    else failed.push({ ...found, to: `user:${u.userId}` });
  }
  return { recipients: out, failed };
}
