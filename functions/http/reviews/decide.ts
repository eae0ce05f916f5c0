// POST /api/reviews/{approvalId}?token=…: the confirmation page's form decides, as the link's reviewer.
import { route } from './decide.route.ts';
import { pageHttp } from '../../../shared/http/page-handler.ts';
import { unsupportedMediaType } from '../../../shared/errors.ts';
import { decideByReview } from '../../../shared/domain/reviews.ts';
import { FIELD_PREFIX, reviewedPage } from '../../../shared/http/review-page.tsx';
import { checkPageForm, PAGE_FIELD } from '../../../shared/http/page-form.ts';

export const handler = pageHttp(route, async ({ params, query, event, request }) => {
  const type = event.headers['content-type'];
  if (type !== undefined && !/^application\/x-www-form-urlencoded\s*(;.*)?$/i.test(type.trim())) throw unsupportedMediaType();
  const form = new URLSearchParams(
    event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '',
  );
  // Only the page's own form decides (page-form.ts); a link without a token is refused as not valid by decideByReview.
  if (query.token) checkPageForm(query.token, event.rawPath, form.get(PAGE_FIELD));
  const formData: Record<string, string> = {};
  for (const [k, v] of form) if (k.startsWith(FIELD_PREFIX)) formData[k.slice(FIELD_PREFIX.length)] = v;
  const { review, decided, decision } = await decideByReview(
    query.token,
    params.approvalId,
    { decision: form.get('decision') ?? undefined, comment: form.get('comment')?.slice(0, 2000) || undefined, formData },
    { sourceIp: request.sourceIp, userAgent: event.headers['user-agent'] },
  );
  return reviewedPage(review, decided, decision);
});
