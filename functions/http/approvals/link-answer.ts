// The one-click link's answer for its three routes (link.ts, link-head.ts, link-confirm.ts), each its own function.
import type { route } from './link.route.ts';
import type { Input } from '../../../shared/http/handler.ts';
import { badRequest } from '../../../shared/errors.ts';
import { parseDecision } from '../../../shared/schemas/approvals.ts';
import { approvalToDecide, decide, formValuesOf, requireApproval } from '../../../shared/domain/approvals.ts';
import { approvalFacts } from '../../../shared/domain/approval-facts.ts';
import { confirmationPage, decidedPage, PREVIEW_BOT } from '../../../shared/http/approval-page.tsx';
import { FIELD_PREFIX, needsValue } from '../../../shared/http/approval-fact-rows.tsx';
import { presentedKey } from '../../../shared/http/credentials.ts';
import { checkPageForm, PAGE_FIELD, pageFormValue } from '../../../shared/http/page-form.ts';

export const respond = async ({ principal, params, query, event, request }: Input<Pick<typeof route, 'auth' | 'params' | 'query'>>) => {
  const decision = parseDecision(params.decision);
  if (!decision) throw badRequest('INVALID_DECISION', 'The link must end in /approve or /reject.');
  const method = event.requestContext.http.method;
  const userAgent = event.headers['user-agent'] ?? '';
  const confirmed = query.confirm === '1' && (method === 'POST' || (method === 'GET' && !PREVIEW_BOT.test(userAgent)));
  if (confirmed) {
    // A GET approves in one click only when the step's form needs nothing typed: otherwise the page asks for it.
    const a = decision === 'approve' ? await requireApproval(principal.accountId, params.approvalId) : undefined;
    if (method === 'POST' || !a?.form?.some(needsValue)) {
      // The confirmation page's button: only the page's own form decides (page-form.ts); a GET is the one-click link.
      const form = method === 'POST' ? formBody(event) : undefined;
      if (method === 'POST') checkPageForm(presentedKey(event, true), event.rawPath, form?.get(PAGE_FIELD));
      const fields: Record<string, string> = {};
      for (const [k, v] of form ?? []) if (k.startsWith(FIELD_PREFIX)) fields[k.slice(FIELD_PREFIX.length)] = v;
      const decided = await decide({
        principal,
        approvalId: params.approvalId,
        decision,
        comment: query.comment,
        channel: 'link',
        sourceIp: request.sourceIp,
        userAgent,
        // The page showed the step's form: its values apply and its required fields must be filled in.
        ...(a && method === 'POST' ? { formData: formValuesOf(a, fields), formShown: true } : {}),
      });
      return decidedPage(decided, decision);
    }
  }
  const a = await approvalToDecide(principal, params.approvalId);
  const action = `${event.rawPath}?${new URLSearchParams({ ...query, confirm: '1' } as Record<string, string>)}`;
  return confirmationPage(
    a,
    await approvalFacts(a),
    decision,
    action,
    query.comment,
    pageFormValue(presentedKey(event, true) ?? '', event.rawPath),
  );
};

/** The form POST's body (application/x-www-form-urlencoded). */
const formBody = (event: Input<Pick<typeof route, 'auth'>>['event']) =>
  new URLSearchParams(event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : '');
