import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Base62 of an unsigned big-endian number, left-padded with '0' to `width` characters. */
export function base62(bytes: Uint8Array, width = 0): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let s = '';
  while (n > 0n) {
    s = ALPHABET[Number(n % 62n)] + s;
    n /= 62n;
  }
  return s.padStart(width, '0');
}

const checksum = (s: string) => {
  const c = crc32(Buffer.from(s, 'utf8'));
  return base62(new Uint8Array([c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255]), 6);
};

/** 32 random bytes in base62 (43 characters, fixed width). */
const SECRET_BODY = 43;
const CHECKSUM = 6;

/** `dyk` API keys, `dys` sessions, `dyc` callback tokens (whose id part is the account's). */
export type TokenPrefix = 'dyk' | 'dys' | 'dyc';
export type ParsedToken = { prefix: TokenPrefix; id: string; token: string };

/**
 * Mint `<prefix>_<id>_<secret>`: the secret is 32 random bytes in base62 followed by a 6-character
 * base62 CRC32 of everything before it, so a mistyped or truncated token is refused without a read.
 */
export function mintToken(prefix: TokenPrefix, id: string): string {
  const head = `${prefix}_${id}_${base62(randomBytes(32), SECRET_BODY)}`;
  return head + checksum(head);
}

const SHAPE = /^(dyk|dys|dyc)_([0-9a-z]{26})_([0-9A-Za-z]{49})$/;

/** Parse and checksum-verify a token; `undefined` when it is malformed in any way. Never throws. */
export function parseToken(token: string, prefix: TokenPrefix): ParsedToken | undefined {
  if (token.length > 100) return undefined;
  const m = SHAPE.exec(token);
  if (!m || m[1] !== prefix) return undefined;
  const head = token.slice(0, -CHECKSUM);
  if (checksum(head) !== token.slice(-CHECKSUM)) return undefined;
  return { prefix, id: m[2] as string, token };
}

/** Tokens are high-entropy: a plain SHA-256 is the right hash at rest (no need for a slow KDF). */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** Constant-time string comparison that cannot throw on a length mismatch. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf16le').digest();
  const hb = createHash('sha256').update(b, 'utf16le').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
