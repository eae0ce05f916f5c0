/**
 * One interface for every outgoing approval channel (ARCHITECTURE "Outgoing messages"): each
 * provider is a module (`./slack.ts`, `./email.ts`, `./teams.ts`) that renders an approval message,
 * sends it, brings a sent one up to date and sends a test message; `./index.ts` is the registry.
 */

/** Where a sent message lives, so it can be updated: Slack's conversation and `ts`; SES's message id. */
export type MessageRef = { channel?: string; ts?: string; messageId?: string };

/** A provider's answer to one send, update or test. */
export type SendResult = {
  ok: boolean;
  /** The provider's HTTP status, when there was an HTTP answer. */
  status?: number;
  /** The provider's error (Slack's `error`, SES's exception name and message, the webhook's answer). */
  error?: string;
  /** A 429's `Retry-After`: when to try again. */
  retryAfterSeconds?: number;
  ref?: MessageRef;
};

/** A channel with its write-only fields opened (shared/domain/channels.ts `openChannel`). */
export type OpenChannel = {
  channelId: string;
  accountId: string;
  name: string;
  type: 'slack' | 'email' | 'teams';
  defaultChannel?: string;
  from?: string;
  botToken?: string;
  signingSecret?: string;
  webhookUrl?: string;
};

/** What every approval message shows, whichever the channel (built by ./card.ts). */
export type ApprovalCard = {
  approvalId: string;
  title: string;
  description?: string;
  workflowId: string;
  workflowName?: string;
  executionId: string;
  stepId: string;
  /** The form's fields with their defaults. */
  fields: { name: string; label?: string; value?: unknown }[];
  minApprovals: number;
  approvals: number;
  status: 'PENDING' | 'APPROVED' | 'REJECTED' | 'EXPIRED' | 'CANCELLED';
  /** Who decided (their email where known) and when, once handled. */
  decidedBy?: string;
  decidedAt?: number;
  expiresAt?: number;
  /** The confirmation page; approve/reject only on a message to one reviewer (links bound to them). */
  links: { review: string; approve?: string; reject?: string };
  /** The recipient's name (email) on a message to one reviewer. */
  recipient?: string;
};

export interface ChannelAdapter {
  /** The provider's message for this card (Block Kit, an Adaptive Card, a mail's subject, text and HTML). */
  render(card: ApprovalCard): unknown;
  /** Send the card to `to` (a Slack conversation or user id, a mail address, ignored by Teams). */
  send(channel: OpenChannel, to: string, card: ApprovalCard): Promise<SendResult>;
  /**
   * Bring a sent message up to date (outcome, who, when, no buttons). Slack edits it in place; Teams
   * posts a follow-up card (a Workflows webhook cannot edit); mail cannot change once sent (its links
   * open a page that says the approval is handled), so email sends nothing.
   */
  update(channel: OpenChannel, ref: MessageRef, card: ApprovalCard): Promise<SendResult>;
  /** Send a test message and report the provider's answer. */
  test(channel: OpenChannel, to: string | undefined): Promise<SendResult>;
}

/** Text shared by the renderers. */
export const progress = (c: ApprovalCard) => `${c.approvals} of ${c.minApprovals} approvals`;
export const when = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
export const outcome = (c: ApprovalCard): string | undefined => {
  const by = c.decidedBy ? ` by ${c.decidedBy}` : '';
  const at = c.decidedAt ? ` at ${when(c.decidedAt)}` : '';
  switch (c.status) {
    case 'APPROVED':
      return `Approved${by}${at}`;
    case 'REJECTED':
      return `Rejected${by}${at}`;
    case 'EXPIRED':
      return `Expired${at} without a decision`;
    case 'CANCELLED':
      return `Cancelled with its run${at}`;
    default:
      return undefined;
  }
};
/** "Field: value" lines of the form's defaults. */
export const fieldLines = (c: ApprovalCard) =>
  c.fields.map((f) => `${f.label ?? f.name}: ${f.value === undefined || f.value === null ? '—' : String(f.value)}`);
