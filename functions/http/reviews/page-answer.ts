// The page of a reviewer's link, for its GET and HEAD (page.ts, head.ts): it records nothing.
import type { route } from './page.route.ts';
import type { Input } from '../../../shared/http/handler.ts';
import { openReview } from '../../../shared/domain/reviews.ts';
import { approvalFacts } from '../../../shared/domain/approval-facts.ts';
import { reviewPage } from '../../../shared/http/review-page.tsx';
import { pageFormValue } from '../../../shared/http/page-form.ts';

export const respond = async ({ params, query, event }: Input<Pick<typeof route, 'auth' | 'params' | 'query'>>) => {
  const review = await openReview(query.token, params.approvalId);
  const token = query.token ?? '';
  return reviewPage(
    review,
    await approvalFacts(review.approval),
    `${event.rawPath}?${new URLSearchParams({ token })}`,
    pageFormValue(token, event.rawPath),
  );
};
