import * as z from 'zod';
import { channelKinds } from '../channels/index.ts';
import { type ChannelSetting, type ChannelSettings, isMasked } from '../channels/types.ts';
import { CHANNEL_TYPES, ChannelType } from '../db/channel-types.ts';
import { ChannelName, SLACK_CONVERSATION } from '../engine/steps/approval-notify.ts';
import { isHttpUrl } from '../engine/steps/common.ts';
import { Email } from './identity.ts';
import { idOf } from './common.ts';

const writeOnly = 'Write-only: sealed at rest, shown masked.';
const BotToken = z
  .string()
  .regex(/^xox[bp]-[A-Za-z0-9-]{8,250}$/, 'must be a Slack bot token (xoxb-…)')
  .describe(`The Slack app's bot token (scopes chat:write, users:read, users:read.email). ${writeOnly}`);
const SigningSecret = z
  .string()
  .regex(/^[A-Za-z0-9]{16,128}$/, "must be the Slack app's signing secret (letters and digits)")
  .describe(`Verifies Slack's interactivity requests (v0 signatures). ${writeOnly}`);
const DefaultChannel = z
  .string()
  .regex(SLACK_CONVERSATION, 'must be #name or a Slack channel id')
  .describe('Where an approval step without `to` posts.');
const From = Email.describe("The sender: an address of the stack's verified SES identity.");
const WebhookUrl = z
  .string()
  .max(2048)
  .refine((s) => isHttpUrl(s, true), 'must be an https URL (http only for localhost or 127.0.0.1)')
  .describe(
    `A Teams Workflows webhook URL ("When a Teams webhook request is received"); subject to the http_request egress rules. ${writeOnly}`,
  );

const Name = ChannelName.describe('Unique in the account (any case); approval steps name it in `notify[].channel`.');

/** Every setting's syntax; which settings a kind has (and which it requires) is its adapter's `settings`. */
const SETTINGS: { [F in ChannelSetting]-?: z.ZodType<string> } = {
  botToken: BotToken,
  signingSecret: SigningSecret,
  defaultChannel: DefaultChannel,
  from: From,
  webhookUrl: WebhookUrl,
};

/** A create body per kind: its type, a name and its adapter's settings. */
const kindBody = (type: ChannelType) =>
  z.object({
    type: z.literal(type),
    name: Name,
    ...Object.fromEntries(
      Object.entries(channelKinds[type].settings).map(([f, required]) => [
        f,
        required ? SETTINGS[f as ChannelSetting] : SETTINGS[f as ChannelSetting].optional(),
      ]),
    ),
  });
const [first, ...rest] = CHANNEL_TYPES.map(kindBody);
export const CreateChannelBody = z.discriminatedUnion('type', [first as ReturnType<typeof kindBody>, ...rest]) as unknown as z.ZodType<
  { type: ChannelType; name: string } & ChannelSettings
>;
export type CreateChannelBody = z.infer<typeof CreateChannelBody>;

/**
 * What is not sent stays; the fields must be the channel's type's (400 otherwise); an optional
 * setting (`defaultChannel`) sent as `null` is removed. The view round-trips: `type` may be sent
 * when it is the channel's own (another is 400 `IMMUTABLE_FIELD`), and a write-only setting may be
 * sent as the mask the view showed, which keeps the stored value.
 */
const optionalSettings = new Set(
  CHANNEL_TYPES.flatMap((t) => Object.entries(channelKinds[t].settings).flatMap(([f, required]) => (required ? [] : [f]))),
);
const writeOnlySettings = new Set(CHANNEL_TYPES.flatMap((t) => Object.keys(channelKinds[t].secrets)));
/** A write-only setting on update: a new value, or the view's mask (the stored value stays). */
const newOrMasked = (schema: z.ZodType<string>) =>
  z.union([z.string().max(2048).refine(isMasked, 'not a mask').describe("The view's mask, as shown: keeps the stored value."), schema], {
    // Neither: the new value's own complaint.
    error: (iss) => (iss.code === 'invalid_union' ? (iss.errors as z.core.$ZodIssue[][]).at(-1)?.[0]?.message : undefined),
  });
const updatable = (f: string, schema: z.ZodType<string>) =>
  optionalSettings.has(f) ? schema.nullable().optional() : (writeOnlySettings.has(f) ? newOrMasked(schema) : schema).optional();
export const UpdateChannelBody = z
  .object({
    name: Name.optional(),
    type: ChannelType.optional().describe("Cannot change: the channel's own type is accepted, another is 400 IMMUTABLE_FIELD."),
    ...(Object.fromEntries(Object.entries(SETTINGS).map(([f, schema]) => [f, updatable(f, schema)])) as {
      [F in Exclude<ChannelSetting, 'defaultChannel'>]: z.ZodOptional<z.ZodType<string>>;
    } & {
      defaultChannel: z.ZodOptional<z.ZodNullable<z.ZodType<string>>>;
    }),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'Send at least one field.');
export type UpdateChannelBody = z.infer<typeof UpdateChannelBody>;

export const ChannelParams = z.object({ channelId: idOf('CHANNEL_NOT_FOUND', 'Channel') });

export const TestChannelBody = z.object({
  to: z
    .string()
    .max(254)
    .optional()
    .describe("Slack: a channel (#name or id; default the channel's defaultChannel). Email: an address (default yours). Teams: not used."),
});

export const ChannelView = z.object({
  id: z.string(),
  name: z.string(),
  type: ChannelType,
  defaultChannel: z.string().nullable().optional(),
  from: z.string().optional(),
  botToken: z.string().optional().describe('Masked.'),
  signingSecret: z.string().optional().describe('Masked.'),
  webhookUrl: z.string().optional().describe('Masked: scheme and host only.'),
  interactionsUrl: z.string().optional().describe("Slack: the Request URL of the Slack app's Interactivity settings."),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export const ChannelList = z.object({ items: z.array(ChannelView), nextCursor: z.null() });

export const ChannelTestResult = z.object({
  ok: z.boolean(),
  status: z.number().nullable().describe("The provider's HTTP status."),
  error: z.string().nullable().describe("The provider's error (Slack's `error`, SES's exception, the webhook's answer)."),
  retryAfterSeconds: z.number().nullable(),
});
