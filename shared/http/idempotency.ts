import { badRequest } from '../errors.ts';
import type { HttpEvent } from './context.ts';

/** The opt-in `Idempotency-Key` header: 1 to 255 printable ASCII characters, else 400. */
export function idempotencyKey(event: HttpEvent): string | undefined {
  const key = event.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw badRequest('INVALID_IDEMPOTENCY_KEY', 'Idempotency-Key must be 1 to 255 printable ASCII characters.');
  return key;
}
