import { config } from '../config.ts';

/**
 * PLACEHOLDER until the signed reviewer links land (branch issue-links replaces this module): the
 * review page and the approve/reject links of one reviewer of one approval, for one channel.
 */
export async function reviewerLinks(input: {
  accountId: string;
  approvalId: string;
  userId: string;
  channel: 'email' | 'slack' | 'teams';
  expiresAt?: number;
}): Promise<{ review: string; approve: string; reject: string }> {
  const base = `${config().PUBLIC_BASE_URL}/api/approvals/${input.approvalId}/review`;
  const q = (decision?: string) =>
    new URLSearchParams({ reviewer: input.userId, channel: input.channel, ...(decision ? { decision } : {}) }).toString();
  return { review: `${base}?${q()}`, approve: `${base}?${q('approve')}`, reject: `${base}?${q('reject')}` };
}
