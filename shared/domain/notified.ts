import type { Approval } from '../db/entities/approval.ts';
import { type ApprovalMessage, messageKind } from '../db/entities/approval-message.ts';

/**
 * The v1 approval detail's account of who was told: every message sent for the approval (the
 * request, each reminder, the escalation), oldest first, with its channel and reviewer, and the
 * state of its reminders and escalation (docs/approvals-and-channels.md "Reminders and escalation").
 */
export function notifiedView(a: Approval, messages: readonly ApprovalMessage[]) {
  const pending = a.status === 'PENDING';
  return {
    notifications: [...messages]
      .sort((x, y) => x.sentAt - y.sentAt || x.key.localeCompare(y.key))
      .map((m) => ({
        ...messageKind(m.key),
        channelId: m.channelId,
        channelType: m.channelType,
        to: m.to,
        userId: m.userId ?? null,
        sentAt: m.sentAt,
      })),
    ...(a.remind
      ? {
          reminders: {
            everySeconds: a.remind.everySeconds,
            max: a.remind.max,
            sent: a.reminders ?? 0,
            nextAt: pending && (a.reminders ?? 0) < a.remind.max ? (a.nextRemindAt ?? null) : null,
          },
        }
      : {}),
    ...(a.escalate ? { escalation: { at: a.escalate.at, reviewers: a.escalate.reviewers, escalatedAt: a.escalatedAt ?? null } } : {}),
  };
}
