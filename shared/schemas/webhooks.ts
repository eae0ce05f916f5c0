import ipaddr from 'ipaddr.js';
import * as z from 'zod';
import { VarName } from '../engine/variable-types.ts';
import { idOf } from './common.ts';
import { parseRange } from '../ip-ranges.ts';
import { SIGNATURE_SCHEMES } from '../db/entities/webhook.ts';

/**
 * One allowlist entry: an IPv4 address in dotted four-part decimal, an IPv6 address, or a CIDR of
 * either. Shorthand and octal/hex IPv4 forms (`127.1`, `017700000001`, `0x7f.1`) are refused: they
 * are legal for some parsers and mean something else to a reader.
 */
export const SourceIpEntry = z
  .string()
  .max(64, { abort: true })
  .refine((s) => {
    const [addr, bits, extra] = s.split('/');
    if (!addr || extra !== undefined || (bits !== undefined && !/^\d{1,3}$/.test(bits))) return false;
    const v4 = bits === undefined ? ipaddr.IPv4.isValidFourPartDecimal(addr) : ipaddr.IPv4.isValidCIDRFourPartDecimal(s);
    const v6 = bits === undefined ? ipaddr.IPv6.isValid(addr) : ipaddr.IPv6.isValidCIDR(s);
    // An embedded IPv4 tail (`::ffff:1.2.3.4`) must be plain decimal too.
    const tail = addr.slice(addr.lastIndexOf(':') + 1);
    const decimalTail = !tail.includes('.') || ipaddr.IPv4.isValidFourPartDecimal(tail);
    return v4 || (v6 && addr.includes(':') && decimalTail && parseRange(s) !== undefined);
  }, 'must be an IPv4 address, an IPv6 address or a CIDR range');

export const AllowedSourceIps = z.array(SourceIpEntry).max(100, 'at most 100 entries');
export const VariableMapping = z
  .record(VarName, z.string().min(1).max(256))
  .refine((m) => Object.keys(m).length <= 100, 'at most 100 entries');
const SecretKey = z.string().min(16, 'at least 16 characters').max(256);
const KeyId = idOf('INVALID_API_KEY_BINDING', 'API key', { status: 400, pattern: /^[0-9a-z]{26}$/ });
/** A Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes (the specification's range). */
export const isStandardWebhooksSecret = (s: string) => {
  const bytes = /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) ? Buffer.from(s.slice(6), 'base64').length : 0;
  return bytes >= 24 && bytes <= 64;
};
/** How the webhook's requests are signed when it has a `secretKey` and no bound key (docs/webhooks.md "Webhook senders"). */
const SignatureScheme = z.enum(SIGNATURE_SCHEMES);
/** How a webhook's triggers authenticate: its bound key, a signature made with its secret, or nothing at all. */
export const AuthMode = z.enum(['api_key', 'hmac', 'open']);
const RequestedAuthMode = AuthMode.optional().describe(
  'Optional, except that a webhook left with neither a bound key nor a secret needs `open` said explicitly (else 400 CREDENTIALS_REQUIRED). When given, it must be the mode the request results in; on update, `open` removes the bound key and the secret.',
);

export const CreateWebhookBody = z.object({
  workflowId: idOf('WORKFLOW_NOT_FOUND', 'Workflow'),
  name: z.string().trim().min(1).max(200),
  apiKeyId: KeyId.optional(),
  secretKey: SecretKey.optional(),
  signatureScheme: SignatureScheme.optional(),
  authMode: RequestedAuthMode,
  variableMapping: VariableMapping.optional(),
  allowedSourceIps: AllowedSourceIps.default([]),
  enabled: z.boolean().default(true),
});

export const UpdateWebhookBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    apiKeyId: KeyId.optional(),
    clearApiKeyId: z.boolean().optional(),
    secretKey: SecretKey.optional(),
    signatureScheme: SignatureScheme.optional(),
    authMode: RequestedAuthMode,
    variableMapping: VariableMapping.nullable().optional(),
    allowedSourceIps: AllowedSourceIps.optional(),
    enabled: z.boolean().optional(),
  })
  .superRefine((b, ctx) => {
    if (b.clearApiKeyId && b.secretKey === undefined && b.authMode !== 'open')
      ctx.addIssue({
        code: 'custom',
        path: ['secretKey'],
        message: 'clearApiKeyId requires the shared secret (secretKey) in the same update, or authMode "open"',
      });
    if (b.clearApiKeyId && b.apiKeyId !== undefined)
      ctx.addIssue({ code: 'custom', path: ['apiKeyId'], message: 'cannot bind a key and clear the binding at once' });
    if (Object.values(b).every((v) => v === undefined))
      ctx.addIssue({ code: 'custom', path: [], message: 'at least one field is required' });
  });

export const WebhookParams = z.object({ id: idOf('WEBHOOK_NOT_FOUND', 'Webhook') });
export const TriggerParams = z.object({ webhookId: idOf('WEBHOOK_NOT_FOUND', 'Webhook') });
/** Any JSON object, or an empty body (= `{}`); its top-level fields feed the variable mapping. */
export const TriggerPayload = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'must be a JSON object')
  // Kept as parsed (a copy would turn a `__proto__` key into a prototype); parseRequest has checked its shape.
  .meta({ type: 'object', additionalProperties: true });

export const WebhookView = z.object({
  id: z.string(),
  workflowId: z.string(),
  name: z.string(),
  apiKeyId: z.string().nullable(),
  hasSecretKey: z.boolean(),
  authMode: AuthMode,
  /** Flagged: anyone who has the URL can start runs. */
  open: z.boolean().describe('true when the webhook is open: anyone who has its URL can start runs'),
  /** The scheme of an `hmac` webhook; null in the other modes. */
  signatureScheme: SignatureScheme.nullable(),
  variableMapping: z.record(z.string(), z.string()).nullable(),
  allowedSourceIps: z.array(z.string()),
  enabled: z.boolean(),
  createdBy: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
});
export const WebhookList = z.object({ items: z.array(WebhookView), nextCursor: z.null() });
export const WebhookStats = z.object({
  total: z.number(),
  accepted: z.number(),
  rejected: z.record(z.string(), z.number()),
  lastTriggeredAt: z.number().nullable(),
  daily: z.array(z.object({ date: z.string(), accepted: z.number(), rejected: z.number() })),
});
export const TriggerResult = z.object({
  executionId: z.string(),
  webhookId: z.string(),
  workflowId: z.string(),
  /** `PENDING` for a new execution; a replayed Idempotency-Key returns the earlier one's status. */
  status: z.string(),
  startedAt: z.number(),
});
/** What a trigger answers with 200: the run it started (or replayed), or a sender's handshake (no run). */
export const TriggerAnswer = z.union([
  TriggerResult,
  z.object({ ok: z.literal(true), event: z.literal('ping') }).describe('A signed GitHub ping (X-GitHub-Event: ping)'),
  z.object({ challenge: z.string() }).describe("A signed Slack url_verification: Slack's challenge, echoed"),
]);
