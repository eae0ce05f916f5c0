import { createHmac, randomBytes } from 'node:crypto';
import { config } from '../config.ts';
import { forbidden } from '../errors.ts';
import type { HttpEvent, Middleware } from './context.ts';
import { safeEqual } from '../tokens.ts';

/**
 * The link pages' forms (a reviewer's link, the one-click link's confirmation page) decide an
 * approval with the link's credential alone, so their POST must come from the page itself:
 *
 * - `pageForms()`, on every POST of an HTML route (base.ts): a cross-site request is refused with a
 *   403 page before anything else. Fetch Metadata first (`Sec-Fetch-Site` other than `same-origin`
 *   or `none` is refused); a browser that sends none is judged by `Origin`, refused unless it is
 *   PUBLIC_BASE_URL's or the host the request was sent to (a browser sets both; a page elsewhere
 *   cannot make them agree). (`Origin: null` is let through to the next check: our pages' `no-referrer`
 *   policy makes some browsers send it for their own forms.)
 * - the form carries a per-page value (`pageFormValue`, a hidden field): a fresh nonce and an
 *   HMAC-SHA256 keyed by the link's credential over the nonce and the page's path. The POST that
 *   decides checks it (`checkPageForm`, constant-time): a form built elsewhere, without the page,
 *   has none that fits.
 */

/** The hidden field's name. */
export const PAGE_FIELD = 'page';
const DOMAIN = 'flowgate.page-form.v1';
const NONCE_CHARS = 22; // 16 bytes, base64url

const mac = (credential: string, path: string, nonce: string) =>
  createHmac('sha256', credential).update(`${DOMAIN}.${nonce}.${path}`).digest('base64url');

/** A page's form value for the link credential `credential` on `path` (the page's and its form's). */
export function pageFormValue(credential: string, path: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${mac(credential, path, nonce)}`;
}

const notFromPage = () =>
  forbidden(
    'PAGE_FORM_INVALID',
    'This form did not come from the page of this link (or was changed). Open the link from your message again and use its button.',
  );

/** Refuse a POST whose form value (`sent`) is missing or was not made for this credential and path. */
export function checkPageForm(credential: string | undefined, path: string, sent: string | null | undefined): void {
  const [nonce, tag, ...rest] = (sent ?? '').split('.');
  const valid =
    credential !== undefined &&
    credential !== '' &&
    nonce?.length === NONCE_CHARS &&
    tag !== undefined &&
    rest.length === 0 &&
    safeEqual(tag, mac(credential, path, nonce));
  if (!valid) throw notFromPage();
}

const crossSite = () =>
  forbidden('CROSS_SITE_REQUEST', 'This request came from another site. Open the link from your message and use its button.');

const ownOrigin = () => new URL(config().PUBLIC_BASE_URL).origin;

/** PUBLIC_BASE_URL's origin, or the host the request was sent to (the page's own, whatever name the API is reached by). */
const sameOrigin = (origin: string, host: string | undefined) => {
  try {
    const url = new URL(origin);
    return url.origin === ownOrigin() || (host !== undefined && url.host === host.toLowerCase());
  } catch {
    return false;
  }
};

/** Whether a request is one a page of another site made (Fetch Metadata, else `Origin`). */
export function isCrossSite(event: Pick<HttpEvent, 'headers' | 'requestContext'>): boolean {
  const site = event.headers['sec-fetch-site']?.trim().toLowerCase();
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = event.headers.origin?.trim();
  return origin !== undefined && origin !== 'null' && !sameOrigin(origin, event.headers.host ?? event.requestContext?.domainName);
}

/** The HTML routes' POST: cross-site requests refused; the per-page value is the handler's to check. */
export const pageForms = (): Middleware => ({
  problems: [
    { status: 403, code: 'CROSS_SITE_REQUEST' },
    { status: 403, code: 'PAGE_FORM_INVALID' },
  ],
  before: ({ event }) => {
    if (isCrossSite(event)) throw crossSite();
  },
});
