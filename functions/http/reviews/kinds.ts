// What the reviewer's-link routes share (page.route.ts, head.route.ts, decide.route.ts).
import { refuses } from '../../route-kinds.ts';

/** Reading the page signs nothing but checks the link's signature. */
export const reviewRead = ['table:read', 'links:sign'] as const;
export const reviewDecides = ['table:read', 'table:write', 'queue:send', 'links:sign'] as const;
/** What opening a link can refuse (every use is checked: review-links.ts, reviews.ts). */
export const reviewErrors = [
  ...refuses(403, 'REVIEW_LINK_INVALID', 'REVIEW_LINK_OTHER_APPROVAL', 'REVIEWER_REMOVED', 'REVIEWER_DISABLED', 'NOT_A_REVIEWER'),
  ...refuses(410, 'REVIEW_LINK_EXPIRED'),
  ...refuses(404, 'APPROVAL_NOT_FOUND'),
  ...refuses(409, 'APPROVAL_ALREADY_HANDLED', 'REVIEWER_ALREADY_DECIDED'),
];
