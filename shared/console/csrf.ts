import { createHmac } from 'node:crypto';
import { forbidden } from '../errors.ts';
import { safeEqual } from '../tokens.ts';

// Every state-changing request of a console page carries a token bound to its session: an HMAC-SHA256
// keyed by the session token (which only the server and the HttpOnly cookie hold) over a fixed label.
// A page of another site cannot read it, and another session's token does not fit. Cross-site
// requests are refused before this, by Fetch Metadata (shared/http/page-form.ts `pageForms`).

/** The form field (and the `X-CSRF-Token` header, for scripted requests) that carries it. */
export const CSRF_FIELD = 'csrf';
const LABEL = 'flowgate.console.csrf.v1';

export const csrfToken = (sessionToken: string) => createHmac('sha256', sessionToken).update(LABEL).digest('base64url');

/** Refuse (403) a request whose token is missing or was not made for this session. */
export function checkCsrf(sessionToken: string, sent: string | null | undefined): void {
  if (!sent || !safeEqual(sent, csrfToken(sessionToken)))
    throw forbidden('CSRF_TOKEN_INVALID', 'This form is out of date or did not come from this console. Reload the page and try again.');
}
