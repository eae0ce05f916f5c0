import { createHmac, randomBytes } from 'node:crypto';
import { config } from '../config.ts';
import { badRequest } from '../errors.ts';
import { safeEqual } from '../tokens.ts';

// Without CURSOR_SECRET (local mode, tests) a per-process secret: cursors then only work within the
// process that issued them. The CDK stack always sets one.
const fallbackSecret = randomBytes(32).toString('hex');
const secret = () => config().CURSOR_SECRET ?? fallbackSecret;
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
