import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEYLEN = 32;

/** `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** A stored hash for unknown emails, so a failed login costs the same either way. */
const DUMMY = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parts = (stored ?? DUMMY).split('$');
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
    actual = await scrypt(password, Buffer.from(salt, 'base64url'), KEYLEN, { N, r: R, p: P, maxmem: PARAMS.maxmem });
  } catch {
    return false;
  }
  return timingSafeEqual(actual, expected) && stored !== undefined;
}
