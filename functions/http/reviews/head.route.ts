import type { Route } from '../../../shared/http/route.ts';
import { REVIEW_PATH } from '../../../shared/links.ts';
import { ReviewParams, ReviewQuery } from '../../../shared/schemas/reviews.ts';
import { none } from '../../route-kinds.ts';
import { reviewErrors, reviewRead } from './kinds.ts';

export const route = {
  method: 'HEAD',
  path: REVIEW_PATH,
  handler: 'http/reviews/head',
  summary: "A reviewer's link, HEAD: the confirmation page's headers only",
  tag: 'Approval Webhook',
  auth: none,
  grants: reviewRead,
  throttle: 'approval',
  params: ReviewParams,
  query: ReviewQuery,
  html: true,
  errors: reviewErrors,
} as const satisfies Route;
