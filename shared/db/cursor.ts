import { createHmac, randomBytes } from 'node:crypto';
import { config } from '../config.ts';
import { badRequest } from '../errors.ts';
import { readSecret } from '../secrets.ts';
import { safeEqual } from '../tokens.ts';

// On AWS the key is a Secrets Manager secret, read once at a cold start: the stack gives its ARN,
// and the grant to read it, to the functions that page. Read from process.env at import time, not
// through config(), which is parsed later and once (local mode sets the environment after import).
const secretArn = process.env.CURSOR_SECRET_ARN;
const stored = secretArn ? await readSecret(secretArn) : undefined;
// Without either (local mode, tests) a per-process secret: cursors then only work within the
// process that issued them. On Lambda every instance must sign alike, so a function the stack gave
// no key fails instead.
const fallbackSecret = randomBytes(32).toString('hex');
function secret(): string {
  const key = stored ?? config().CURSOR_SECRET;
  if (key) return key;
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('CURSOR_SECRET_ARN is not set');
  return fallbackSecret;
}
const sign = (payload: string) => createHmac('sha256', secret()).update(payload).digest('base64url');

const invalid = () => badRequest('INVALID_CURSOR', 'The cursor is invalid, tampered with, or from another query.');

/**
 * An opaque cursor for a DynamoDB page: the last evaluated key plus the query it belongs to, signed.
 * `binding` names the query (principal, path, filters) so a cursor is useless anywhere else.
 */
export function encodeCursor(lastKey: Record<string, unknown> | undefined, binding: string): string | null {
  if (!lastKey) return null;
  const payload = Buffer.from(JSON.stringify({ k: lastKey, b: binding })).toString('base64url');
  return `${payload}.${sign(payload)}`;
}

export function decodeCursor(cursor: string | undefined, binding: string): Record<string, unknown> | undefined {
  if (cursor === undefined) return undefined;
  const [payload, mac, extra] = cursor.split('.');
  if (!payload || !mac || extra !== undefined || cursor.length > 4096 || !safeEqual(mac, sign(payload))) throw invalid();
  try {
    const { k, b } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k: unknown; b: unknown };
    if (b !== binding || typeof k !== 'object' || k === null) throw invalid();
    return k as Record<string, unknown>;
  } catch {
    throw invalid();
  }
}
