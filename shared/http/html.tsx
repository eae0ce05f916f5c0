import { createHash } from 'node:crypto';
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { HttpResult } from './context.ts';

// The one-click and reviewer link pages (and their error pages): built from components and rendered to a
// string by Preact, which escapes every interpolated value (text and attributes) by construction.

const CSS = `
:root{color-scheme:light dark;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
body{margin:0;padding:1.5rem;display:flex;justify-content:center;background:Canvas;color:CanvasText}
main{max-width:32rem;width:100%}
h1{font-size:1.5rem;margin:0 0 1rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
button{font:inherit;font-size:1.125rem;padding:.8rem 1.4rem;border-radius:.5rem;border:0;cursor:pointer;width:100%;min-height:3rem}
.approve{background:#1a7f37;color:#fff}.reject{background:#cf222e;color:#fff}
.note{opacity:.8;font-size:.9rem}
label{display:block;margin:.6rem 0 .2rem}fieldset{border:0;padding:0;margin:0 0 .6rem}legend{font-weight:600}
input,select,textarea{font:inherit;width:100%;box-sizing:border-box;padding:.4rem}form button{margin-top:.8rem}
`.trim();
const CSS_HASH = createHash('sha256').update(CSS).digest('base64');

/** Headers of every one-click page: never cached, indexed, framed or leaking the URL (with its key). Its one style by hash. */
export const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
  'x-content-type-options': 'nosniff',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${CSS_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
} as const;

/** A term and its value in a page's `<dl>`. */
export const Row = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </>
);

/** A complete page: `body` under a heading of `title`, everything escaped by the renderer. */
export function htmlPage(status: number, title: string, body: ComponentChildren): HttpResult {
  const document = (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <meta name="robots" content="noindex,nofollow" />
        <title>{title}</title>
        {/* The page's one stylesheet, a constant allowed by its hash in the CSP (no user data in it). */}
        <style dangerouslySetInnerHTML={{ __html: CSS }} />
      </head>
      <body>
        <main>
          <h1>{title}</h1>
          {body}
        </main>
      </body>
    </html>
  );
  return { statusCode: status, headers: { ...PAGE_HEADERS }, body: `<!doctype html>${renderToString(document)}` };
}

/** An error as a page: what went wrong (and each field refused, with why), and the request id. */
export const errorPage = (
  status: number,
  title: string,
  detail: string,
  requestId: string,
  errors: readonly { path: string; message: string }[] = [],
) =>
  htmlPage(
    status,
    title,
    <>
      <p>{detail}</p>
      {errors.length > 0 && (
        <ul>
          {errors.map((e) => (
            <li key={e.path}>
              <code>{e.path}</code> {e.message}
            </li>
          ))}
        </ul>
      )}
      <p class="note">Request {requestId}</p>
    </>,
  );
