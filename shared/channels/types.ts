import type { ChannelType } from '../db/channel-types.ts';

/**
 * One interface for every outgoing approval channel (docs/architecture.md): each kind of channel is
 * one module (`./slack.ts`, `./email.ts`, `./teams.ts`) exporting its `ChannelKind` (which settings
 * a channel of the kind has, which are write-only and how they show) and its `ChannelAdapter` (whom
 * a message reaches; render, send, update, a test message). `./index.ts` is the registry, keyed by
 * the kinds of shared/db/channel-types.ts. The orchestration (which messages, to whom, when, the
 * cards, the delivery log) is shared/notifications/'s; nothing here imports above shared/db/.
 */

/** Where a sent message lives, so it can be updated: Slack's conversation and `ts`; SES's message id. */
export type MessageRef = { channel?: string; ts?: string; messageId?: string };

/**
 * The answer to one attempt at sending anything outgoing: an approval message's send, update or
 * test (a channel's provider), an event notification (its receiver). The notifications worker
 * logs it as the delivery's attempt and decides the retry.
 */
export type SendResult = {
  ok: boolean;
  /** The provider's or receiver's HTTP status, when there was an HTTP answer. */
  status?: number;
  /** What went wrong (Slack's `error`, SES's exception name and message, the receiver's answer); no secrets. */
  error?: string;
  /** A 429's (or 503's) `Retry-After`: when to try again. */
  retryAfterSeconds?: number;
  /** Where the sent message lives (to update it). */
  ref?: MessageRef;
  /** No retry can fix it (gone, refused address, invalid recipient): FAILED now. */
  final?: boolean;
  /** Not sent on purpose, for good (a reminder of an approval handled since): SKIPPED, `error` says why. */
  skipped?: boolean;
  /** Where it went, as the delivery log may show it, when the sender learns it only while sending. */
  target?: string;
};

/** The settings a channel may have beside its name, by field; which ones a kind has is its adapter's `settings`. */
export type ChannelSettings = {
  /** Slack: where a step without `to` posts. */
  defaultChannel?: string;
  /** Email: the sender address. */
  from?: string;
  botToken?: string;
  signingSecret?: string;
  webhookUrl?: string;
};
export type ChannelSetting = keyof ChannelSettings;

/**
 * What a write-only setting shows instead of its value (with a kind's hint: the token's last four
 * characters, the webhook's origin). A value that holds it is the view's mask, never a new value:
 * sent back exactly as the view showed it, it keeps what is stored (the rule of every write-only
 * value: docs/secrets.md).
 */
export const MASK = '••••';
export const isMasked = (value: string) => value.includes(MASK);

/** A channel with its write-only fields opened (shared/domain/channels.ts `openChannel`). */
export type OpenChannel = ChannelSettings & {
  channelId: string;
  accountId: string;
  name: string;
  type: ChannelType;
};

/** What every approval message shows, whichever the channel (built by shared/notifications/card.ts). */
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

/** One recipient of a message: a conversation (`key` names it in the stored message's key) or a reviewer's address. */
export type Address = { key: string; to: string };

/**
 * What a channel of one kind is: its settings, how its write-only ones show, what its view adds.
 * Kept apart from the sending (`ChannelAdapter`) so the channel routes and the definition checks
 * bundle no provider client.
 */
export interface ChannelKind<T extends ChannelType = ChannelType> {
  readonly type: T;
  /**
   * The settings a channel of this kind has beside its name, in the order the API shows them:
   * `true` for a required one. A write-only one is also in `secrets`.
   */
  readonly settings: Readonly<Partial<Record<ChannelSetting, boolean>>>;
  /** The write-only settings (sealed at rest) and how each is shown (masked). */
  readonly secrets: Readonly<Partial<Record<ChannelSetting, (value: string) => string>>>;
  /** Whether a `notify` entry's `to` may name a conversation (`"#deploys"`) instead of reviewers. */
  readonly conversations: boolean;
  /** With no `to`, a test message goes to the caller's own address. */
  readonly testsCaller?: boolean;
  /** What the channel's view shows beyond its name, type and settings (Slack's interactivity URL). */
  view?(channel: Pick<OpenChannel, 'channelId' | 'defaultChannel'>): Record<string, unknown>;
}

/** How a kind of channel sends: whom a message reaches, rendering, sending, updating, a test message. */
export interface ChannelAdapter<T extends ChannelType = ChannelType> {
  /** What the kind is (its own export too, for code that sends nothing). */
  readonly kind: ChannelKind<T>;
  /**
   * Where a `notify` entry's message goes when it is not to each reviewer: a conversation (Slack: `to`,
   * else the channel's default one), the one chat of a webhook (Teams). Undefined: to each reviewer.
   */
  conversation(channel: OpenChannel, to: string | readonly string[] | undefined): Address | undefined;
  /** A reviewer's address on this kind (their mail address, their Slack user id); a lookup that finds none is a failed send. */
  reviewer(channel: OpenChannel, user: { email: string; slackUserId?: string }): Promise<SendResult & { to?: string }>;
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
/**
 * The form's fields as shown: label (else name) and default (`—` when none). A default that is no
 * string shows as JSON: a run's object may be anything (`{"toString": false}` made String() throw).
 */
export const formFields = (c: ApprovalCard) =>
  c.fields.map((f) => ({
    label: f.label ?? f.name,
    value: f.value === undefined || f.value === null ? '—' : typeof f.value === 'string' ? f.value : (JSON.stringify(f.value) ?? '—'),
  }));
/** "Field: value" lines of the form's defaults. */
export const fieldLines = (c: ApprovalCard) => formFields(c).map((f) => `${f.label}: ${f.value}`);
