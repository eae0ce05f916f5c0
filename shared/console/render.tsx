import type { ComponentChildren, VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { HttpResult } from '../http/context.ts';
import { ASSET } from './asset-names.generated.ts';
import type { ConsoleSession } from './auth.ts';
import { CSRF_FIELD } from './csrf.ts';

// Every console page: one document built from components and rendered to a string by Preact, which
// escapes every interpolated value (text and attributes) by construction. No page builds markup from strings.

/**
 * Scripts and styles only from our own hashed assets; no inline script or style (and so no `style`
 * attribute: the console's styles are classes in console.css), no eval; nothing framed, nothing sent elsewhere.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const CONSOLE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': CONSOLE_CSP,
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'x-robots-tag': 'noindex, nofollow',
} as const;

/** htmx under the CSP: no eval, no script tags from responses, no injected styles, requests to this origin only. */
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  refreshOnHistoryMiss: true,
});

/** The console's sections, in the navigation's order. */
export const SECTIONS = [
  { name: 'Runs', href: '/console/runs' },
  { name: 'Approvals', href: '/console/approvals' },
  { name: 'Workflows', href: '/console/workflows' },
  { name: 'Webhooks', href: '/console/webhooks' },
  { name: 'Schedules', href: '/console/schedules' },
] as const;

/** The account's settings: under "Settings" in the navigation (a disclosure: no script needed). */
export const SETTINGS = [
  { name: 'API keys', href: '/console/keys' },
  { name: 'Secrets', href: '/console/secrets' },
  { name: 'Channels', href: '/console/channels' },
  { name: 'Members', href: '/console/members' },
  { name: 'Account', href: '/console/account' },
  { name: 'Audit log', href: '/console/audit' },
] as const;

/** The hidden field every signed-in form carries. */
export const Csrf = ({ session }: { session: ConsoleSession }) => <input type="hidden" name={CSRF_FIELD} value={session.csrf} />;

/**
 * The approvals waiting for the signed-in person, as the navigation shows them ("Approvals 3", read by a
 * screen reader as "Approvals 3 waiting for you"; "3+" when more pending ones were not looked through).
 * Only pages that read the pending approvals anyway (the overview, the inbox) know it: no page reads the
 * table for its navigation (docs/console.md "The count in the navigation").
 */
export type NavWaiting = { count: number; more: boolean };

function WaitingCount({ waiting }: { waiting: NavWaiting | undefined }) {
  if (!waiting || waiting.count === 0) return null;
  return (
    <>
      {' '}
      <span class="nav-count">{`${waiting.count}${waiting.more ? '+' : ''}`}</span>
      <span class="visually-hidden"> waiting for you</span>
    </>
  );
}

function Nav({ session, current, waiting }: { session: ConsoleSession; current: string | undefined; waiting: NavWaiting | undefined }) {
  return (
    <header class="container">
      <nav aria-label="Console">
        <ul>
          <li>
            <a href="/console">
              <strong>Flowgate</strong>
            </a>
          </li>
          {SECTIONS.map((s) => (
            <li key={s.href}>
              <a href={s.href} aria-current={current === s.href ? 'page' : undefined}>
                {s.name}
                {s.href === '/console/approvals' ? <WaitingCount waiting={waiting} /> : null}
              </a>
            </li>
          ))}
          <li>
            <details class="dropdown">
              <summary aria-current={SETTINGS.some((s) => s.href === current) ? 'page' : undefined}>Settings</summary>
              <ul>
                {SETTINGS.map((s) => (
                  <li key={s.href}>
                    <a href={s.href} aria-current={current === s.href ? 'page' : undefined}>
                      {s.name}
                    </a>
                  </li>
                ))}
              </ul>
            </details>
          </li>
        </ul>
        <ul>
          <li class="who">
            {session.email} · {session.accountName}
          </li>
          <li>
            <form method="post" action="/console/logout">
              <Csrf session={session} />
              <button type="submit" class="secondary outline">
                Sign out
              </button>
            </form>
          </li>
        </ul>
      </nav>
    </header>
  );
}

export type PageOptions = {
  title: string;
  /** The signed-in user (the navigation), or none (sign-in and error pages before a session). */
  session?: ConsoleSession | undefined;
  /** The section this page belongs to (`/console/runs`): marked current in the navigation. */
  section?: string;
  /** The navigation's count of approvals waiting for the signed-in person, on the pages that read it. */
  waiting?: NavWaiting | undefined;
  status?: number;
  headers?: Record<string, string>;
  cookies?: string[];
  /** Scripts only this page loads (hashed asset paths, `defer`): the editor's code editor. */
  scripts?: readonly string[];
};

function Document({ title, session, section, waiting, scripts, children }: PageOptions & { children: ComponentChildren }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <meta name="robots" content="noindex,nofollow" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{`${title} · Flowgate`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={ASSET['pico.css']} />
        <link rel="stylesheet" href={ASSET['console.css']} />
        <script src={ASSET['htmx.js']} defer />
        <script src={ASSET['console.js']} defer />
        {scripts?.map((src) => (
          <script key={src} src={src} defer />
        ))}
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        {session ? (
          <Nav session={session} current={section} waiting={waiting} />
        ) : (
          <header class="container">
            <nav aria-label="Console">
              <ul>
                <li>
                  <strong>Flowgate</strong>
                </li>
              </ul>
            </nav>
          </header>
        )}
        <main class="container" id="main" tabindex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A whole page as the response: the document around `body`, with the console's headers. */
export function page(options: PageOptions, body: VNode | VNode[] | ComponentChildren): HttpResult {
  const html = `<!doctype html>${renderToString(<Document {...options}>{body}</Document>)}`;
  return {
    statusCode: options.status ?? 200,
    headers: { ...CONSOLE_HEADERS, ...options.headers },
    ...(options.cookies ? { cookies: options.cookies } : {}),
    body: html,
  };
}

/** A 303 to `location` (after a form POST, or to the sign-in page). */
export const seeOther = (location: string, cookies?: string[]): HttpResult => ({
  statusCode: 303,
  headers: { location, 'cache-control': 'no-store' },
  ...(cookies ? { cookies } : {}),
});
