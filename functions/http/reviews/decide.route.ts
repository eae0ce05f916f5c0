import type { Route } from '../../../shared/http/route.ts';
import { REVIEW_PATH } from '../../../shared/links.ts';
import { ReviewParams, ReviewQuery } from '../../../shared/schemas/reviews.ts';
import { none, refuses } from '../../route-kinds.ts';
import { reviewDecides, reviewErrors } from './kinds.ts';

export const route = {
  method: 'POST',
  path: REVIEW_PATH,
  handler: 'http/reviews/decide',
  summary:
    "A reviewer's link: the confirmation page's form decides (application/x-www-form-urlencoded `decision`, `comment`, `field.<name>`)",
  tag: 'Approval Webhook',
  auth: none,
  grants: reviewDecides,
  throttle: 'approval',
  params: ReviewParams,
  query: ReviewQuery,
  html: true,
  maxBodyBytes: 16 * 1024,
  errors: [
    ...reviewErrors,
    ...refuses(400, 'INVALID_DECISION', 'VALIDATION_FAILED'),
    ...refuses(403, 'NOT_A_REVIEWER'),
    ...refuses(415, 'UNSUPPORTED_MEDIA_TYPE'),
  ],
} as const satisfies Route;
