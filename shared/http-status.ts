import type { AppError, ErrorKind } from './errors.ts';

/**
 * The HTTP status of each kind of error: the one place a kind becomes a status (problem+json, the
 * HTML error pages, a webhook's rejection counts, and the status an approval's audit records for a
 * refused decision). It sits beside errors.ts, below every layer, because the domain's audit records
 * store the status a refusal answered; nothing but this table maps a kind to a number.
 */
export const HTTP_STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
} as const satisfies Record<ErrorKind, number>;

/** The status an error answers. */
export const httpStatus = (e: Pick<AppError, 'kind'>): number => HTTP_STATUS[e.kind];
