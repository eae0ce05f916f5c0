import { describe, expect, it } from 'vitest';
import {
  AppError,
  badRequest,
  conflict,
  forbidden,
  notFound,
  payloadTooLarge,
  rateLimited,
  unauthorized,
  unsupportedMediaType,
  validationFailed,
} from '../../shared/errors.ts';
import { HTTP_STATUS, httpStatus } from '../../shared/http-status.ts';
import { problemResult } from '../../shared/http/middleware/problem.ts';

describe('error kinds and their HTTP statuses (one table)', () => {
  it('answers each kind with the status docs/api.md documents for it', () => {
    const cases: [AppError, number][] = [
      [badRequest('INVALID_JSON', 'x'), 400],
      [validationFailed([]), 400],
      [unauthorized(), 401],
      [forbidden(), 403],
      [notFound(), 404],
      [new AppError('method_not_allowed', 'METHOD_NOT_ALLOWED', 'Method not allowed'), 405],
      [conflict(), 409],
      [new AppError('gone', 'REVIEW_LINK_EXPIRED', 'Link expired'), 410],
      [payloadTooLarge(1), 413],
      [unsupportedMediaType(), 415],
      [rateLimited(1, {}), 429],
    ];
    for (const [e, status] of cases) {
      expect(httpStatus(e), e.code).toBe(status);
      const res = problemResult(e, 'req');
      expect(res.statusCode, e.code).toBe(status);
      expect(JSON.parse(res.body as string)).toMatchObject({ status, code: e.code });
    }
  });

  it('renders anything that is not an AppError as a 500 INTERNAL', () => {
    const res = problemResult(new Error('boom'), 'req');
    expect(res.statusCode).toBe(HTTP_STATUS.internal);
    expect(JSON.parse(res.body as string)).toMatchObject({ status: 500, code: 'INTERNAL' });
  });

  it('carries no HTTP status on the error itself', () => {
    expect(Object.keys(conflict())).not.toContain('statusCode');
  });
});
