import type { Route } from '../../../shared/http/route.ts';
import { ReviewParams, ReviewQuery } from '../../../shared/schemas/reviews.ts';
import { none } from '../../route-kinds.ts';
import { REVIEW, reviewErrors, reviewRead } from './kinds.ts';

export const route = {
  method: 'GET',
  path: REVIEW,
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
