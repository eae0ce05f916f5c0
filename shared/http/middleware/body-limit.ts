import { payloadTooLarge } from '../../errors.ts';
import type { Middleware } from '../context.ts';

/** Size of the body in bytes as the client sent it (after base64 decoding). */
export const bodyBytes = (body: string | undefined, isBase64Encoded: boolean) =>
  body ? Buffer.byteLength(body, isBase64Encoded ? 'base64' : 'utf8') : 0;

/** 413 before anything else looks at a body larger than `limit` bytes. */
export const bodyLimit = (limit: number): Middleware => ({
  problems: [{ status: 413, code: 'PAYLOAD_TOO_LARGE' }],
  before: async ({ event }) => {
    if (bodyBytes(event.body, event.isBase64Encoded) > limit) throw payloadTooLarge(limit);
  },
});
