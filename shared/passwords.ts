import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { config } from './config.ts';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/**
 * scrypt at N = 2^17, r = 8, p = 1 (OWASP's current figure): 128 MiB and about 0.3 s of one core per
 * hash, which the login function's memory is sized for (functions/routes.ts). `PASSWORD_SCRYPT_N`
 * lowers N for the test suite only.
 */
export const SCRYPT_N = 2 ** 17;
const params = () => ({ N: config().PASSWORD_SCRYPT_N, r: 8, p: 1 });
/** Enough for N = 2^18 at r = 8 (256 MiB); a stored hash that needs more is refused, not computed. */
const MAXMEM = 260 * 1024 * 1024;
const KEYLEN = 32;

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = params();
  const hash = await scrypt(password, salt, KEYLEN, { N, r, p, maxmem: MAXMEM });
  return ['scrypt', N, r, p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** A stored hash made with other parameters than today's: replaced at the next successful login. */
export function needsRehash(stored: string): boolean {
  const [, n, r, p] = stored.split('$');
  const want = params();
  return Number(n) !== want.N || Number(r) !== want.r || Number(p) !== want.p;
}

/** A stored hash for unknown emails, at today's parameters, so a failed login costs the same either way. */
export const dummyHash = () => `scrypt$${params().N}$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;

export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parts = (stored ?? dummyHash()).split('$');
  const [alg, n, r, p, salt = '', hash = ''] = parts;
  const N = Number(n);
  const R = Number(r);
  const P = Number(p);
  const B64URL = /^[A-Za-z0-9_-]+$/;
  if (parts.length !== 6 || alg !== 'scrypt' || !B64URL.test(salt) || !B64URL.test(hash)) return false;
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0) return false;
  if (!Number.isInteger(R) || R < 1 || R > 32 || !Number.isInteger(P) || P < 1 || P > 16) return false;
  const expected = Buffer.from(hash, 'base64url');
  if (expected.length !== KEYLEN) return false;
  let actual: Buffer;
  try {
    actual = await scrypt(password, Buffer.from(salt, 'base64url'), KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  } catch {
    return false;
  }
  return timingSafeEqual(actual, expected) && stored !== undefined;
}
