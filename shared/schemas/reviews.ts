import * as z from 'zod';

/**
 * A reviewer's link: `/api/reviews/{approvalId}?token=…` (shared/domain/review-links.ts). The token is
 * the credential and names its approval, so it is checked first, against any path: a malformed id
 * answers as an unknown one does (403 without a valid token, `REVIEW_LINK_OTHER_APPROVAL` with another's).
 */
export const ReviewParams = z.object({ approvalId: z.string() });
/** The token is checked by the handler (any string: a bad one is the page's 403, never a 400). */
export const ReviewQuery = z.object({ token: z.string().optional() });
