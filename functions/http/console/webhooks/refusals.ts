// Why the trigger refused a request, in a sentence per refusal code: the console's words for the table of
// docs/webhooks.md "Each refusal, and what to check" (test/unit/inbound-reasons.test.ts keeps the two alike).

export const REFUSAL_REASONS: Readonly<Record<string, string>> = {
  PAYLOAD_TOO_LARGE: 'The body is over 1 MiB.',
  UNAUTHORIZED: 'No API key was sent to a webhook bound to one.',
  INVALID_API_KEY: 'The API key is malformed, revoked or expired, or its owner was disabled or removed.',
  KEY_NOT_BOUND: 'A valid API key, but not the one bound to this webhook.',
  MISSING_SCOPE: 'The bound API key lacks the WEBHOOK_TRIGGER scope.',
  INVALID_SIGNATURE: 'The signature is missing or does not match the secret.',
  SIGNATURE_EXPIRED: "The sender's timestamp is more than 5 minutes from now.",
  RATE_LIMITED: "Too many requests: the address's failed authentications, or the account's requests a minute.",
  IP_NOT_ALLOWED: "The sender's address is outside the webhook's source IP allowlist.",
  WEBHOOK_DISABLED: 'The webhook was disabled.',
  UNSUPPORTED_MEDIA_TYPE: 'The Content-Type is not JSON.',
  INVALID_JSON: 'The body is not JSON.',
  BODY_NOT_OBJECT: 'The body is JSON but not an object.',
  INVALID_IDEMPOTENCY_KEY: 'The Idempotency-Key is not 1 to 255 printable ASCII characters.',
  IDEMPOTENCY_KEY_REUSED: 'The idempotency key (or delivery id) came within 24 hours with another body.',
  TEMPORARILY_UNAVAILABLE: "AWS refused for a moment; the sender's retry is answered.",
};

/** The reason of a refusal `code`: its sentence, or the code itself for one this list does not know yet. */
export const refusalReason = (code: string) => REFUSAL_REASONS[code] ?? `Refused with ${code}.`;
