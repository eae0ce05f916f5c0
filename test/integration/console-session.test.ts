import { beforeAll, describe, expect, it } from 'vitest';
import { handler as overview } from '../../functions/http/console/overview.ts';
import { handler as consoleLogin } from '../../functions/http/console/login/sign-in.ts';
import { handler as loginPage } from '../../functions/http/console/login/page.ts';
import { handler as logout } from '../../functions/http/console/logout/sign-out.ts';
import { clearSessionCookie, sessionCookie, setSessionCookie } from '../../shared/console/cookie.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { resetConfig } from '../../shared/config.ts';
import { updateMember } from '../../shared/domain/members.ts';
import { adminSession, givenAccount, PASSWORD } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * The console's session cookie and its CSRF token, through the pages' handlers in-process against the
 * real emulators: what a browser sends, and what a page of another site can make a browser send.
 */

type Result = { statusCode: number; headers?: Record<string, string>; cookies?: string[]; body?: string };
const call = async (
  handler: (e: never, c: never) => Promise<unknown>,
  opts: {
    method?: string;
    path: string;
    cookie?: string;
    cookies?: string[];
    form?: Record<string, string>;
    headers?: Record<string, string>;
  },
) => {
  const event = apiEvent({
    method: opts.method ?? 'GET',
    path: opts.path,
    headers: { ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...opts.headers },
    ...(opts.form ? { body: new URLSearchParams(opts.form).toString() } : {}),
    sourceIp: freshIp(),
  });
  if (opts.cookie) event.cookies = [`flowgate_session=${opts.cookie}`];
  if (opts.cookies) event.cookies = [...(event.cookies ?? []), ...opts.cookies];
  return (await handler(event as never, lambdaContext())) as Result;
};
/** What a browser gets from the sign-in page: its pre-session cookie (`name=value`) and the form's hidden value. */
const signInPage = async (cookies?: string[]) => {
  const res = await call(loginPage, { path: '/console/login', ...(cookies ? { cookies } : {}) });
  expect(res.statusCode).toBe(200);
  const page = /name="page" value="([^"]+)"/.exec(res.body ?? '')?.[1] as string;
  expect(page).toBeTruthy();
  return { cookies: cookies ?? (res.cookies ?? []).map((c) => c.split(';')[0] as string), page };
};
/** The sign-in form posted as a browser does after loading the page. */
const signIn = async (form: Record<string, string>, headers?: Record<string, string>) => {
  const { cookies, page } = await signInPage();
  return call(consoleLogin, { method: 'POST', path: '/console/login', cookies, form: { page, ...form }, ...(headers ? { headers } : {}) });
};
const signedIn = async (token: string) => (await call(overview, { path: '/console', cookie: token })).statusCode === 200;

let account: Awaited<ReturnType<typeof givenAccount>>;
beforeAll(async () => {
  account = await givenAccount();
});

describe('the console session cookie', () => {
  it('is set by the sign-in form and opens the pages; a bad password sets nothing', async () => {
    const bad = await signIn({ email: account.admin.email, password: 'nope' });
    expect(bad.statusCode).toBe(401);
    expect(bad.cookies ?? []).toEqual([]);
    expect(bad.body).toContain('Email or password is wrong');
    const good = await signIn({ email: account.admin.email, password: PASSWORD, next: '/console/runs?status=FAILED' });
    expect(good.statusCode).toBe(303);
    expect(good.headers?.location).toBe('/console/runs?status=FAILED');
    expect(good.cookies?.[1]).toBe('flowgate_signin=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
    const set = good.cookies?.[0] ?? '';
    expect(set).toMatch(/^flowgate_session=dys_\S+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const token = sessionCookie({ cookies: [set.split(';')[0] as string] }) as string;
    expect(await signedIn(token)).toBe(true);
  });

  it('is __Host- prefixed and Secure when the service is served over https', () => {
    const before = process.env.PUBLIC_BASE_URL;
    process.env.PUBLIC_BASE_URL = 'https://flows.example.com';
    resetConfig();
    try {
      expect(setSessionCookie('dys_x', 60)).toBe('__Host-flowgate_session=dys_x; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure');
      expect(clearSessionCookie()).toBe('__Host-flowgate_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure');
      // Over https only the prefixed cookie is read: a plain one (set by a sibling subdomain, say) is ignored.
      expect(sessionCookie({ cookies: ['flowgate_session=dys_plain', '__Host-flowgate_session=dys_host'] })).toBe('dys_host');
      expect(sessionCookie({ cookies: ['flowgate_session=dys_plain'] })).toBeUndefined();
    } finally {
      process.env.PUBLIC_BASE_URL = before;
      resetConfig();
    }
  });

  it('is the only credential a page takes: an API key or a Bearer session redirects to the sign-in page', async () => {
    const bearerSession = await sessionOf(account.admin.email);
    for (const authorization of [`Bearer ${account.adminKey.token}`, `Bearer ${bearerSession}`]) {
      const res = await call(overview, { path: '/console', headers: { authorization, 'x-api-key': account.adminKey.token } });
      expect(res.statusCode).toBe(303);
      expect(res.headers?.location).toBe('/console/login?next=%2Fconsole');
    }
  });

  it('ends at once when the member is disabled (the next page asks to sign in), and stays ended after a re-enable', async () => {
    const token = await sessionOf(account.member.email);
    expect(await signedIn(token)).toBe(true);
    await updateMember(adminSession(account), account.member.userId, { disabled: true });
    const after = await call(overview, { path: '/console', cookie: token });
    expect(after.statusCode).toBe(303);
    expect(after.headers?.location).toBe('/console/login?next=%2Fconsole');
    expect(after.cookies).toEqual([clearSessionCookie()]);
    await updateMember(adminSession(account), account.member.userId, { disabled: false });
    expect(await signedIn(token)).toBe(false);
  });
});

describe('sign-in CSRF', () => {
  it('the sign-in page sets an HttpOnly, SameSite=Strict pre-session cookie, and keeps the one a browser has', async () => {
    const first = await call(loginPage, { path: '/console/login' });
    expect(first.cookies).toHaveLength(1);
    expect(first.cookies?.[0]).toMatch(/^flowgate_signin=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=86400$/);
    const again = await call(loginPage, { path: '/console/login', cookies: [first.cookies?.[0]?.split(';')[0] as string] });
    expect(again.cookies ?? []).toEqual([]);
  });

  it('refuses a sign-in form that did not come from our page, even with Origin: null and no Fetch Metadata (nothing checked, no session)', async () => {
    const nullOrigin = { origin: 'null' };
    const refusedWith = async (f: { cookies?: string[]; form: Record<string, string> }) => {
      const res = await call(consoleLogin, {
        method: 'POST',
        path: '/console/login',
        headers: nullOrigin,
        ...(f.cookies ? { cookies: f.cookies } : {}),
        form: { ...f.form, email: account.admin.email, password: PASSWORD },
      });
      expect(res.statusCode, JSON.stringify(f)).toBe(403);
      expect(res.body).toContain('This sign-in form has expired or did not come from this site');
      expect((res.cookies ?? []).filter((c) => c.startsWith('flowgate_session='))).toEqual([]);
    };
    // A page elsewhere: the browser sends no pre-session cookie (SameSite=Strict), and the form has no value.
    await refusedWith({ form: {} });
    const mine = await signInPage();
    const theirs = await signInPage();
    // The attacker made a value of their own (from their own visit), but the victim's browser has another cookie.
    await refusedWith({ cookies: mine.cookies, form: { page: theirs.page } });
    await refusedWith({ cookies: mine.cookies, form: { page: 'x.y' } });
    await refusedWith({ cookies: mine.cookies, form: {} });
    // The page's own form, with Origin: null (some browsers send it for their own forms), signs in.
    const own = await call(consoleLogin, {
      method: 'POST',
      path: '/console/login',
      headers: nullOrigin,
      cookies: mine.cookies,
      form: { page: mine.page, email: account.admin.email, password: PASSWORD },
    });
    expect(own.statusCode).toBe(303);
    expect(own.cookies?.[0]).toMatch(/^flowgate_session=dys_/);
  });
});

describe('CSRF on the console forms (sign-out here; every page POST has the same stack)', () => {
  it('refuses 403, changing nothing: no token, another session’s token, a cross-site request with the right token', async () => {
    const token = await sessionOf(account.admin.email);
    const other = await sessionOf((await givenAccount()).admin.email);
    const refused: { form: Record<string, string>; headers?: Record<string, string> }[] = [
      { form: { note: 'no token' } },
      { form: { csrf: csrfToken(other) } },
      { form: { csrf: csrfToken(token) }, headers: { 'sec-fetch-site': 'cross-site' } },
      { form: { csrf: csrfToken(token) }, headers: { origin: 'https://evil.example' } },
      { form: { csrf: csrfToken(token) }, headers: { 'sec-fetch-site': 'same-site' } },
    ];
    for (const r of refused) {
      const res = await call(logout, { method: 'POST', path: '/console/logout', cookie: token, ...r });
      expect(res.statusCode, JSON.stringify(r)).toBe(403);
      expect(res.headers?.['content-type']).toBe('text/html; charset=utf-8');
      expect(await signedIn(token), JSON.stringify(r)).toBe(true);
    }
    const done = await call(logout, {
      method: 'POST',
      path: '/console/logout',
      cookie: token,
      form: { csrf: csrfToken(token) },
      headers: { 'sec-fetch-site': 'same-origin' },
    });
    expect(done.statusCode).toBe(303);
    expect(await signedIn(token)).toBe(false);
  });

  it('a form that is not a form is refused 415', async () => {
    const token = await sessionOf(account.admin.email);
    const res = await call(logout, {
      method: 'POST',
      path: '/console/logout',
      cookie: token,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(415);
    expect(await signedIn(token)).toBe(true);
  });
});
