/**
 * What went wrong, in the service's own terms. The HTTP status of each kind is in one table,
 * `HTTP_STATUS` (shared/http-status.ts); nothing else maps a kind to a status.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  /** AWS refused for now what may pass in a moment (a transaction in flight on the item, a throttle): 503 with Retry-After. */
  | 'unavailable'
  | 'internal';

/**
 * The one error type of the service. Domain code throws these with a stable `code` and a `kind`; the
 * HTTP layer maps them to problem+json (or an HTML page) in one place. Anything else is a 500 `INTERNAL`.
 */
export class AppError extends Error {
  readonly expose = true;
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    readonly title: string,
    detail?: string,
    /** Extra members of the problem document (e.g. `errors` for validation) and response headers. */
    readonly extra: { body?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? title);
    this.name = 'AppError';
  }
}

export type FieldError = { path: string; message: string };

export const badRequest = (code: string, detail: string, errors?: FieldError[]) =>
  new AppError('invalid', code, 'Bad request', detail, errors ? { body: { errors } } : {});

export const validationFailed = (errors: FieldError[]) =>
  new AppError('invalid', 'VALIDATION_FAILED', 'Validation failed', 'The request is not valid.', { body: { errors } });

export const unauthorized = (code = 'UNAUTHORIZED', detail = 'Missing or invalid credentials.') =>
  new AppError('unauthorized', code, 'Unauthorized', detail, { headers: { 'www-authenticate': 'Bearer' } });

export const forbidden = (code = 'FORBIDDEN', detail = 'You may not do this.') => new AppError('forbidden', code, 'Forbidden', detail);

export const notFound = (code = 'NOT_FOUND', detail = 'Not found.') => new AppError('not_found', code, 'Not found', detail);

export const conflict = (code = 'CONFLICT', detail = 'The resource is not in a state that allows this.') =>
  new AppError('conflict', code, 'Conflict', detail);

export const payloadTooLarge = (limit: number) =>
  new AppError('too_large', 'PAYLOAD_TOO_LARGE', 'Payload too large', `The body is larger than ${limit} bytes.`);

export const unsupportedMediaType = () =>
  new AppError('unsupported_media_type', 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type', 'Send Content-Type: application/json.');

export const rateLimited = (retryAfterSeconds: number, headers: Record<string, string>) =>
  new AppError('rate_limited', 'RATE_LIMITED', 'Too many requests', `Retry in ${retryAfterSeconds} s.`, {
    headers: { ...headers, 'retry-after': String(retryAfterSeconds) },
  });

/** A DynamoDB conditional check failed (used to turn lost races into conflicts). */
export const isConditionFailure = (e: unknown): boolean =>
  e instanceof Error &&
  (e.name === 'ConditionalCheckFailedException' || (e.name === 'TransactionCanceledException' && /ConditionalCheckFailed/.test(e.message)));

/**
 * An AWS refusal that passes by itself: the SDK's own retries of a throttle or a service error ran
 * out (DynamoDB's ProvisionedThroughputExceeded, ThrottlingException, RequestLimitExceeded, a 500 or
 * 503 of the service, S3's SlowDown).
 */
export const isTransientAws = (e: unknown): boolean =>
  e instanceof Error &&
  (/^(ProvisionedThroughputExceededException|ThrottlingException|RequestLimitExceeded|SlowDown|InternalServerError|ServiceUnavailable)$/.test(
    e.name,
  ) ||
    ((e as { $fault?: string }).$fault === 'server' &&
      [500, 503].includes((e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0)));

/** What an error answers: an AppError as it is; a transaction conflict or a transient AWS refusal that outlived its retries, 503 with Retry-After; anything else a 500 `INTERNAL`. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isTransactionConflict(error) || isTransientAws(error)) {
    return new AppError(
      'unavailable',
      'TEMPORARILY_UNAVAILABLE',
      'Temporarily unavailable',
      'A moment of contention on our side; try again.',
      {
        headers: { 'retry-after': '1' },
      },
    );
  }
  return new AppError('internal', 'INTERNAL', 'Internal error', 'Something went wrong on our side.');
}

/**
 * DynamoDB refused a write because a transaction was in flight on one of its items (a plain write
 * during a transaction, or two transactions at once). Nothing was written; the write may be tried
 * again. DynamoDB Local serializes transactions and never reports it.
 */
export const isTransactionConflict = (e: unknown): boolean =>
  e instanceof Error &&
  (e.name === 'TransactionConflictException' || (e.name === 'TransactionCanceledException' && /TransactionConflict/.test(e.message)));
