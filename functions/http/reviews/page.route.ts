import type { Route } from '../../../shared/http/route.ts';
import { REVIEW_PATH } from '../../../shared/links.ts';
import { ReviewParams, ReviewQuery } from '../../../shared/schemas/reviews.ts';
import { none } from '../../route-kinds.ts';
import { reviewErrors, reviewRead } from './kinds.ts';

export const route = {
  method: 'GET',
  path: REVIEW_PATH,
  handler: 'http/reviews/page',
  summary: "A reviewer's link: the confirmation page (records nothing)",
  tag: 'Approval Webhook',
  auth: none,
  grants: reviewRead,
  throttle: 'approval',
  params: ReviewParams,
  query: ReviewQuery,
  html: true,
  errors: reviewErrors,
} as const satisfies Route;
