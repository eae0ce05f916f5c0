import { createHmac } from 'node:crypto';
import * as z from 'zod';
import { config } from '../config.ts';
import { ChannelType } from '../db/channel-types.ts';
import { AppError, forbidden } from '../errors.ts';
import { loadOrCreateKeyFile } from '../keyring.ts';
import { link, REVIEW_PATH } from '../links.ts';
import { safeEqual } from '../tokens.ts';

/**
 * Links bound to one reviewer of one approval, sent in that reviewer's own message (mail, Slack,
 * Teams). The token in the link is an HMAC-SHA256 over the account, the approval, the reviewer's
 * user id, the decisions it allows, the channel it was sent by and its expiry: the approval's
 * deadline, capped at REVIEW_LINK_MAX_DAYS (so a link never outlives what it decides, nor a month by
 * default). Whoever opens it decides as that reviewer, after a confirmation page (a GET never decides)
 * and only while the reviewer is still an enabled member and a reviewer (checked when it is used).
 *
 * The key: a Secrets Manager secret on AWS (REVIEW_LINK_SECRET_ARN, given by the stack to the
 * functions that sign or check links, read once per instance on first use), a key file under DATA_DIR
 * locally (REVIEW_LINK_KEY_FILE, 0600), so links already mailed keep working after a restart.
 */

export type Decision = 'approve' | 'reject';

/** Tokens are a few hundred characters; anything far longer is refused before any work. */
export const MAX_TOKEN_LENGTH = 2048;
const DOMAIN = 'flowgate.review-link.v1';

let key: Promise<Buffer> | undefined;
/** The signing key, loaded once (a failed load is retried by the next call). */
function signingKey(): Promise<Buffer> {
  key ??= loadKey().catch((e: unknown) => {
    key = undefined;
    throw e;
  });
  return key;
}

async function loadKey(): Promise<Buffer> {
  // Read from process.env, not config(): the stack sets the ARN beside the settings, like CURSOR_SECRET_ARN.
  const arn = process.env.REVIEW_LINK_SECRET_ARN;
  if (arn) {
    const { readSecret } = await import('../secrets.ts');
    return Buffer.from(await readSecret(arn), 'utf8');
  }
  const file = config().REVIEW_LINK_KEY_FILE;
  if (file) return loadOrCreateKeyFile(file);
  throw new Error('Reviewer links need REVIEW_LINK_SECRET_ARN (AWS) or REVIEW_LINK_KEY_FILE (local)');
}

/** Forget the loaded key (tests that change the key's setting). */
export const resetReviewLinkKey = () => {
  key = undefined;
};

const Claims = z.object({
  v: z.literal(1),
  /** account, approval, reviewer (user id) */
  acc: z.string().min(1).max(64),
  apr: z.string().min(1).max(64),
  usr: z.string().min(1).max(64),
  /** allowed decisions: `a` approve, `r` reject, `ar` both */
  dec: z.enum(['a', 'r', 'ar']),
  ch: ChannelType,
  /** expiry, epoch milliseconds */
  exp: z.number().int().positive(),
});
type Claims = z.infer<typeof Claims>;

export type ReviewGrant = {
  accountId: string;
  approvalId: string;
  userId: string;
  decisions: Decision[];
  channel: ChannelType;
  expiresAt: number;
};

const mac = async (payload: string) =>
  createHmac('sha256', await signingKey())
    .update(`${DOMAIN}.${payload}`)
    .digest('base64url');

async function sign(c: Claims): Promise<string> {
  const payload = Buffer.from(JSON.stringify(c)).toString('base64url');
  return `${payload}.${await mac(payload)}`;
}

/** When a reviewer's link stops working: the approval's deadline, at most REVIEW_LINK_MAX_DAYS from now. */
export const linkExpiry = (expiresAt: number | undefined, now = Date.now()) =>
  Math.min(expiresAt ?? Number.POSITIVE_INFINITY, now + Math.round(config().REVIEW_LINK_MAX_DAYS * 86_400_000));

/**
 * The three links of one reviewer's message: `review` opens the page with both decisions (and the
 * form), `approve` and `reject` the page with that decision only. Each is a GET to the confirmation
 * page; only the page's button (a POST) decides.
 */
export async function reviewerLinks(input: {
  accountId: string;
  approvalId: string;
  userId: string;
  channel: ChannelType;
  expiresAt?: number;
}): Promise<{ review: string; approve: string; reject: string }> {
  const base = { v: 1 as const, acc: input.accountId, apr: input.approvalId, usr: input.userId, ch: input.channel };
  const exp = linkExpiry(input.expiresAt);
  const url = async (dec: Claims['dec']) =>
    link(REVIEW_PATH, { approvalId: input.approvalId }, `?${new URLSearchParams({ token: await sign({ ...base, dec, exp }) })}`);
  const [review, approve, reject] = await Promise.all([url('ar'), url('a'), url('r')]);
  return { review, approve, reject };
}

const invalid = () =>
  forbidden('REVIEW_LINK_INVALID', 'This link is not valid: it is incomplete or was changed. Open the link from your message again.');

/**
 * Check a link's token for `approvalId`: its signature (constant-time), its approval and its expiry.
 * Refusals: 403 `REVIEW_LINK_INVALID` (malformed, tampered, signed with another key), 403
 * `REVIEW_LINK_OTHER_APPROVAL`, 410 `REVIEW_LINK_EXPIRED`. Never throws anything else for any input.
 */
export async function verifyReviewToken(token: string | undefined, approvalId: string, now = Date.now()): Promise<ReviewGrant> {
  if (!token || token.length > MAX_TOKEN_LENGTH) throw invalid();
  const [payload, signature, extra] = token.split('.');
  if (!payload || !signature || extra !== undefined || !/^[\w-]+$/.test(payload)) throw invalid();
  if (!safeEqual(signature, await mac(payload))) throw invalid();
  let claims: Claims;
  try {
    claims = Claims.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    throw invalid();
  }
  if (claims.apr !== approvalId)
    throw forbidden('REVIEW_LINK_OTHER_APPROVAL', 'This link was made for another approval; it cannot decide this one.');
  if (claims.exp <= now)
    throw new AppError(
      'gone',
      'REVIEW_LINK_EXPIRED',
      'Link expired',
      `This link expired at ${new Date(claims.exp).toISOString()}. Ask for a new one, or decide in the console.`,
    );
  return {
    accountId: claims.acc,
    approvalId: claims.apr,
    userId: claims.usr,
    decisions: claims.dec === 'ar' ? ['approve', 'reject'] : claims.dec === 'a' ? ['approve'] : ['reject'],
    channel: claims.ch,
    expiresAt: claims.exp,
  };
}
