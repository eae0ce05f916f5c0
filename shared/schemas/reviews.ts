import * as z from 'zod';
import { idOf } from './common.ts';

/** A reviewer's link: `/api/reviews/{approvalId}?token=…` (shared/domain/review-links.ts). */
export const ReviewParams = z.object({ approvalId: idOf('APPROVAL_NOT_FOUND', 'Approval') });
/** The token is checked by the handler (any string: a bad one is the page's 403, never a 400). */
export const ReviewQuery = z.object({ token: z.string().optional() });
