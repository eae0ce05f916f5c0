// The one-click link's answer for its three routes (link.ts, link-head.ts, link-confirm.ts), each its own function.
import type { route } from './link.route.ts';
import type { Input } from '../../../shared/http/handler.ts';
import { badRequest } from '../../../shared/errors.ts';
import { parseDecision } from '../../../shared/schemas/approvals.ts';
import { approvalToDecide, decide } from '../../../shared/domain/approvals.ts';
import { confirmationPage, decidedPage, PREVIEW_BOT } from '../../../shared/http/approval-page.tsx';
import { presentedKey } from '../../../shared/http/credentials.ts';
import { checkPageForm, PAGE_FIELD, pageFormValue } from '../../../shared/http/page-form.ts';

export const respond = async ({ principal, params, query, event, request }: Input<Pick<typeof route, 'auth' | 'params' | 'query'>>) => {
  const decision = parseDecision(params.decision);
  if (!decision) throw badRequest('INVALID_DECISION', 'The link must end in /approve or /reject.');
  const method = event.requestContext.http.method;
  const userAgent = event.headers['user-agent'] ?? '';
  const confirmed = query.confirm === '1' && (method === 'POST' || (method === 'GET' && !PREVIEW_BOT.test(userAgent)));
  if (confirmed) {
    // The confirmation page's button: only the page's own form decides (page-form.ts); a GET is the one-click link.
    if (method === 'POST') checkPageForm(presentedKey(event, true), event.rawPath, formField(event, PAGE_FIELD));
    const a = await decide({
      principal,
      approvalId: params.approvalId,
      decision,
      comment: query.comment,
      channel: 'link',
      sourceIp: request.sourceIp,
      userAgent,
    });
    return decidedPage(a, decision);
  }
  const a = await approvalToDecide(principal, params.approvalId);
  const action = `${event.rawPath}?${new URLSearchParams({ ...query, confirm: '1' } as Record<string, string>)}`;
  return confirmationPage(a, decision, action, query.comment, pageFormValue(presentedKey(event, true) ?? '', event.rawPath));
};

/** A field of a form POST's body (application/x-www-form-urlencoded). */
const formField = (event: Input<Pick<typeof route, 'auth'>>['event'], name: string) =>
  new URLSearchParams(event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '').get(
    name,
  );
