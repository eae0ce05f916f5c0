import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Approval, getApproval, listAudit } from '../../shared/db/entities/approval.ts';
import { type Execution, getExecution } from '../../shared/db/entities/execution.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { reviewerLinks } from '../../shared/domain/review-links.ts';
import { pageFormValue } from '../../shared/http/page-form.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { startRun } from '../../shared/engine/runs.ts';
import { eventually } from '../support/engine.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { bearer, readResponse } from '../support/http.ts';
import { launchBrowser } from '../support/browser.ts';
import { localStackOnSharedEmulators } from '../support/local-stack.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * Reviewers' links (shared/domain/review-links.ts) over HTTP on the local stack and in real Chromium:
 * the GET (and HEAD) page shows who decides and records nothing; its form POST decides as the link's
 * reviewer through `decide` (audit: channel, reviewer, address, user agent), whoever's browser or
 * session opens it; every refusal (decided, expired, another approval, tampered, reviewer disabled,
 * removed or no longer a reviewer, a decision the link does not allow) is an HTML page and changes nothing.
 */

let stack: Awaited<ReturnType<typeof localStackOnSharedEmulators>>['stack'];
let browser: Browser | undefined;
beforeAll(async () => {
  ({ stack } = await localStackOnSharedEmulators('review-links'));
  browser = await launchBrowser();
});
afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await stack?.stop();
  }
});

const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
type Account = Awaited<ReturnType<typeof givenAccount>>;

/** A run waiting at an approval for the account's member (by id) and admins, with a form. */
async function givenApproval(a: Account, step: Record<string, unknown> = {}) {
  const definition = WorkflowDefinition.parse({
    steps: [
      {
        id: 'approve',
        type: 'manual_approval',
        title: 'Ship <it>',
        description: 'Release 1.2',
        reviewers: [`user:${a.member.userId}`, 'role:admin'],
        form: [
          { name: 'note', type: 'string', required: false, default: 'none' },
          { name: 'count', type: 'number', required: false, default: 1 },
        ],
        ...step,
      },
      { id: 'after', type: 'set', values: { by: '{% $steps.approve.decidedBy %}' } },
    ],
  });
  const workflow = await createWorkflow(
    { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' },
    { name: 'review links', definition, recovery: false, editors: [] },
  );
  const { execution } = await startRun({ workflow, trigger: 'api', variables: {}, startedBy: a.admin.userId });
  const run = await eventually(
    () => getExecution(a.account.accountId, execution.executionId) as Promise<Execution>,
    (e) => e.status === 'WAITING_APPROVAL' || e.status === 'FAILED',
    30_000,
  );
  expect(run.status).toBe('WAITING_APPROVAL');
  const approvalId = run.approvalId as string;
  return { accountId: a.account.accountId, executionId: execution.executionId, approvalId };
}
type Given = Awaited<ReturnType<typeof givenApproval>>;

const linksFor = (g: Given, userId: string, extra: { expiresAt?: number; channel?: 'email' | 'slack' | 'teams' } = {}) =>
  reviewerLinks({
    accountId: g.accountId,
    approvalId: g.approvalId,
    userId,
    channel: extra.channel ?? 'email',
    expiresAt: extra.expiresAt,
  });

/** The service's link, on the local stack's address (PUBLIC_BASE_URL of this process is the test one). */
const local = (link: string) => {
  const u = new URL(link);
  return `${stack.url}${u.pathname}${u.search}`;
};
const open = async (link: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  readResponse(await fetch(local(link), { method: init.method ?? 'GET', headers: { 'user-agent': BROWSER_UA, ...init.headers } }));
/** The page's own value for a link (what its form carries: page-form.ts), as if the page had been opened before. */
const pageValueOf = (link: string) => {
  const u = new URL(link);
  return pageFormValue(u.searchParams.get('token') ?? '', u.pathname);
};
/** The page's form POST, as a browser sends it from the page (same origin, the page's value) unless told otherwise. */
const submit = async (link: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  readResponse(
    await fetch(local(link), {
      method: 'POST',
      headers: {
        'user-agent': BROWSER_UA,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        origin: stack.url,
        ...headers,
      },
      body: new URLSearchParams({ page: pageValueOf(link), ...form }).toString(),
    }),
  );

/** A refusal page: the status, an HTML page with the reason, the page headers. */
function expectRefusal(res: Awaited<ReturnType<typeof open>>, status: number, reason: RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.text).toMatch(reason);
}

const approvalOf = async (g: Given) => (await getApproval(g.accountId, g.approvalId)) as Approval;
async function expectUntouched(g: Given) {
  const a = await approvalOf(g);
  expect(a.status).toBe('PENDING');
  expect(a.approvals ?? 0).toBe(0);
  expect((await listAudit(g.accountId, g.approvalId)).filter((r) => r.outcome === 'decided')).toEqual([]);
}

describe("a reviewer's link over HTTP", () => {
  it('GET and HEAD show who decides, the approval and its form, and record nothing; the POST decides as that reviewer', async () => {
    const a = await givenAccount();
    const g = await givenApproval(a);
    const links = await linksFor(g, a.member.userId);
    for (const link of [links.review, links.approve, links.reject]) expect(new URL(link).pathname).toBe(`/api/reviews/${g.approvalId}`);

    const page = await open(links.review);
    expect(page.status, page.text).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.text).toContain(`You are deciding as <strong>${a.member.email}</strong>`);
    // Escaped by the renderer: the title is text, never markup.
    expect(page.text).toContain('Ship &lt;it');
    expect(page.text).not.toContain('<it>');
    expect(page.text).toMatch(/name="field.note"/);
    expect(page.text).toMatch(/value="approve"/);
    expect(page.text).toMatch(/value="reject"/);
    // A link previewer or mail scanner opening it, with any method that is not the form's POST, decides nothing.
    expect(
      (await open(links.approve, { headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' } })).status,
    ).toBe(200);
    expect((await open(links.approve, { method: 'HEAD' })).status).toBe(200);
    const approvePage = await open(links.approve);
    expect(approvePage.text).toMatch(/value="approve"/);
    expect(approvePage.text).not.toMatch(/value="reject"/);
    await expectUntouched(g);

    // Someone else's console session on the request changes nothing: the link decides as its reviewer.
    const adminSession = await sessionOf(a.admin.email);
    const done = await submit(
      links.approve,
      { decision: 'approve', comment: 'looks good', 'field.note': 'shipped', 'field.count': '3' },
      bearer(adminSession),
    );
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('Approved');
    const approval = await approvalOf(g);
    expect(approval).toMatchObject({ status: 'APPROVED', decidedBy: a.member.userId, comment: 'looks good' });
    expect(approval.formData).toEqual({ note: 'shipped', count: 3 });
    const [audit] = await listAudit(g.accountId, g.approvalId);
    expect(audit).toMatchObject({
      outcome: 'decided',
      channel: 'email',
      userId: a.member.userId,
      decision: 'approve',
      userAgent: BROWSER_UA,
    });
    expect(audit?.sourceIp).toBeTruthy();
    expect(audit?.keyId).toBeUndefined();
    const run = await eventually(
      () => getExecution(g.accountId, g.executionId) as Promise<Execution>,
      (e) => e.status === 'SUCCEEDED',
      30_000,
    );
    expect(run.status).toBe('SUCCEEDED');

    // After the decision: the page and its POST are refused, nothing changes.
    expectRefusal(await open(links.review), 409, /is APPROVED/);
    expectRefusal(await submit(links.reject, { decision: 'reject' }), 409, /is APPROVED/);
    expect((await approvalOf(g)).status).toBe('APPROVED');
  });

  it("names the workflow, the run's inputs and times as the console does; a required field must be filled in to approve", async () => {
    const a = await givenAccount();
    const g = await givenApproval(a, {
      form: [
        { name: 'ticket', type: 'string', required: true, label: 'Change <ticket>' },
        { name: 'count', type: 'number', required: false, default: 1 },
      ],
    });
    const links = await linksFor(g, a.member.userId);
    const page = await open(links.approve);
    expect(page.status, page.text).toBe(200);
    expect(page.text).toContain('<dt>Workflow</dt><dd>review links</dd>');
    expect(page.text).toContain('<dt>Inputs</dt><dd>none</dd>');
    expect(page.text).toMatch(/<dt>Requested<\/dt><dd><time datetime="[^"]+">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC<\/time>/);
    // The label is the step's text, escaped; the required field is marked for the browser too.
    expect(page.text).toContain('Change &lt;ticket> (required)');
    expect(page.text).toMatch(/<input id="f-ticket" name="field.ticket" type="text" value[^>]*\brequired\b/);
    // Approving without it is refused (the page's form sent from a browser that ignored `required`), and changes nothing.
    expectRefusal(await submit(links.approve, { decision: 'approve', 'field.ticket': '' }), 400, /Validation failed/);
    expectRefusal(await submit(links.approve, { decision: 'approve' }), 400, /Validation failed/);
    await expectUntouched(g);
    // Rejecting needs no form; here it approves with the ticket.
    const done = await submit(links.approve, { decision: 'approve', 'field.ticket': 'CHG-7' });
    expect(done.status, done.text).toBe(200);
    expect((await approvalOf(g)).formData).toEqual({ ticket: 'CHG-7', count: 1 });
  });

  it('refuses a tampered, truncated, missing or foreign token, another approval, an expired link and a decision the link does not allow', async () => {
    const a = await givenAccount();
    const [g, other] = await Promise.all([givenApproval(a), givenApproval(a)]);
    const links = await linksFor(g, a.member.userId);
    const token = new URL(links.approve).searchParams.get('token') as string;
    const [payload, mac] = token.split('.') as [string, string];
    const withToken = (t: string) => `${stack.url}/api/reviews/${g.approvalId}?${new URLSearchParams({ token: t })}`;
    // The payload re-signed by nobody: another reviewer, both decisions.
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${Buffer.from(JSON.stringify({ ...claims, usr: a.admin.userId, dec: 'ar' })).toString('base64url')}.${mac}`;
    // A MAC with one character changed: the first (all six of its bits count; the last one's low bits
    // do not, and 'A' was its last character 1 time in 64, which left the token valid).
    const tampered = `${payload}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    for (const t of [forged, tampered, token.slice(0, -5), `${token}.x`, 'garbage', '']) {
      expectRefusal(await open(withToken(t)), 403, /not valid/);
      expectRefusal(await submit(withToken(t), { decision: 'approve' }), 403, /not valid/);
    }
    expectRefusal(await open(`${stack.url}/api/reviews/${g.approvalId}`), 403, /not valid/);
    // The token of one approval on another's path.
    expectRefusal(await open(`${stack.url}/api/reviews/${other.approvalId}?${new URLSearchParams({ token })}`), 403, /another approval/);
    expectRefusal(
      await submit(`${stack.url}/api/reviews/${other.approvalId}?${new URLSearchParams({ token })}`, { decision: 'approve' }),
      403,
      /another approval/,
    );
    // An approve-only link cannot reject; a form without a decision decides nothing.
    expectRefusal(await submit(links.approve, { decision: 'reject' }), 400, /can approve/);
    expectRefusal(await submit(links.review, {}), 400, /no decision/);
    // Expired: the approval's deadline (here already past) ends the link.
    const expired = await linksFor(g, a.member.userId, { expiresAt: Date.now() - 1000 });
    expectRefusal(await open(expired.review), 410, /expired/);
    expectRefusal(await submit(expired.approve, { decision: 'approve' }), 410, /expired/);
    // A form that is not a form.
    const json = await readResponse(
      await fetch(local(links.approve), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"decision":"approve"}',
      }),
    );
    expect(json.status).toBe(415);
    await Promise.all([expectUntouched(g), expectUntouched(other)]);
    // Only the genuine link's refusals are audited: a forged, foreign or expired token names nothing trustworthy.
    expect((await listAudit(g.accountId, g.approvalId)).map((r) => [r.outcome, r.code])).toEqual([
      ['refused', 'INVALID_DECISION'],
      ['refused', 'INVALID_DECISION'],
    ]);
    expect(await listAudit(other.accountId, other.approvalId)).toEqual([]);
  });

  it('checks the reviewer when the link is used: disabled, removed, or no longer a reviewer is refused', async () => {
    const a = await givenAccount();
    const g = await givenApproval(a);
    const adminSession = await sessionOf(a.admin.email);
    const members = (path: string, method: string, json?: unknown) =>
      fetch(`${stack.url}/api/members${path}`, {
        method,
        headers: { ...bearer(adminSession), ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : undefined,
      });

    const links = await linksFor(g, a.member.userId, { channel: 'slack' });
    expect((await members(`/${a.member.userId}`, 'PUT', { disabled: true })).status).toBe(200);
    expectRefusal(await open(links.review), 403, /is disabled/);
    expectRefusal(await submit(links.approve, { decision: 'approve' }), 403, /is disabled/);
    expect((await members(`/${a.member.userId}`, 'PUT', { disabled: false })).status).toBe(200);
    expect((await open(links.review)).status).toBe(200);
    expect((await members(`/${a.member.userId}`, 'DELETE')).status).toBe(204);
    expectRefusal(await open(links.review), 403, /no longer a member/);
    expectRefusal(await submit(links.approve, { decision: 'approve' }), 403, /no longer a member/);

    // A member who is no reviewer of this approval (not named, not of a reviewing role).
    const stranger = await createUser(a.account.accountId, uniqueEmail('stranger'), PASSWORD, 'member');
    expectRefusal(await open((await linksFor(g, stranger.userId)).review), 403, /no longer a reviewer/);
    await expectUntouched(g);
    // The refused POSTs of this genuine link are audited (a GET records nothing), with the link's channel and reviewer.
    const refused = (await listAudit(g.accountId, g.approvalId)).filter((r) => r.outcome === 'refused');
    expect(refused.map((r) => [r.code, r.status, r.channel, r.userId, r.decision])).toEqual([
      ['REVIEWER_DISABLED', 403, 'slack', a.member.userId, 'approve'],
      ['REVIEWER_REMOVED', 403, 'slack', a.member.userId, 'approve'],
    ]);
    expect(refused.every((r) => r.userAgent === BROWSER_UA && r.sourceIp)).toBe(true);
  });

  it('a quorum: each reviewer decides once by their own link, the page shows the progress', async () => {
    const a = await givenAccount();
    const g = await givenApproval(a, { minApprovals: 2, form: undefined });
    const [mine, theirs] = await Promise.all([linksFor(g, a.member.userId, { channel: 'teams' }), linksFor(g, a.admin.userId)]);
    const first = await submit(mine.approve, { decision: 'approve' });
    expect(first.status, first.text).toBe(200);
    expect(first.text).toContain('1 more approval needed');
    expectRefusal(await open(mine.review), 409, /already decided/);
    expect((await open(theirs.review)).text).toContain('1 of 2; 1 more needed');
    expect((await submit(theirs.approve, { decision: 'approve' })).status).toBe(200);
    expect((await approvalOf(g)).status).toBe('APPROVED');
    const audit = await listAudit(g.accountId, g.approvalId);
    expect(audit.map((r) => [r.userId, r.channel])).toEqual([
      [a.member.userId, 'teams'],
      [a.admin.userId, 'email'],
    ]);
  });
});

describe("a reviewer's link refuses forms not from its page", () => {
  it('a cross-site form POST (Origin https://evil.example, Sec-Fetch-Site cross-site) is a 403 page and changes nothing', async () => {
    const a = await givenAccount();
    const g = await givenApproval(a);
    const links = await linksFor(g, a.member.userId);
    const attack = { decision: 'approve', comment: 'from evil' };
    // Even with the page's own value: the browser says where the form came from.
    const attacks: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example', 'sec-fetch-site': '' },
    ];
    for (const headers of attacks) {
      const res = await submit(links.approve, attack, headers);
      expectRefusal(res, 403, /another site/);
    }
    // A browser without Fetch Metadata: its Origin decides.
    const bare = await readResponse(
      await fetch(local(links.approve), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: new URLSearchParams({ page: pageValueOf(links.approve), ...attack }).toString(),
      }),
    );
    expectRefusal(bare, 403, /another site/);
    await expectUntouched(g);
    expect(await listAudit(g.accountId, g.approvalId)).toEqual([]);
  });

  it('a form without the page value, or with a forged, changed or other link’s value, is a 403 page; the page’s own form decides', async () => {
    const a = await givenAccount();
    const [g, other] = await Promise.all([givenApproval(a), givenApproval(a)]);
    const links = await linksFor(g, a.member.userId);
    const otherLinks = await linksFor(other, a.member.userId);
    const value = pageValueOf(links.approve);
    const [nonce, tag] = value.split('.') as [string, string];
    for (const page of [
      '',
      'x',
      `${nonce}.`,
      `${nonce}.${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`,
      `${'A'.repeat(22)}.${tag}`,
      `${value}.x`,
      pageValueOf(otherLinks.approve),
      pageValueOf(links.reject),
    ]) {
      expectRefusal(await submit(links.approve, { decision: 'approve', page }), 403, /did not come from the page/);
    }
    const none = await readResponse(
      await fetch(local(links.approve), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        body: 'decision=approve',
      }),
    );
    expectRefusal(none, 403, /did not come from the page/);
    await expectUntouched(g);

    // The page's own form: its hidden value, posted back as a browser does.
    const page = await open(links.approve);
    const hidden = /<input type="hidden" name="page" value="([^"]+)"\/?>/.exec(page.text)?.[1] as string;
    expect(hidden).toMatch(/^[\w-]{22}\.[\w-]{43}$/);
    // Each opening of the page makes a fresh value.
    expect((await open(links.approve)).text).not.toContain(hidden);
    const done = await submit(links.approve, { decision: 'approve', page: hidden }, { 'sec-fetch-site': 'same-origin' });
    expect(done.status, done.text).toBe(200);
    expect((await approvalOf(g)).status).toBe('APPROVED');
  });
});

describe("a reviewer's link in Chromium", () => {
  it('opening it records nothing, the button decides as its reviewer even in another member’s browser; a removed reviewer is refused', async () => {
    const a = await givenAccount();
    const [g, second] = await Promise.all([givenApproval(a), givenApproval(a)]);
    const links = await linksFor(g, a.member.userId);
    // The admin's browser, with the admin's console session on every request: the forwarded link is still the member's.
    const adminSession = await sessionOf(a.admin.email);
    const context = await (browser as Browser).newContext({ extraHTTPHeaders: bearer(adminSession) });
    try {
      const page = await context.newPage();
      const opened = await page.goto(local(links.review));
      expect(opened?.status()).toBe(200);
      expect(await page.title()).toBe('Review: Ship <it>');
      expect(await page.locator('.who').textContent()).toBe(`You are deciding as ${a.member.email}.`);
      await page.reload();
      await expectUntouched(g);

      await page.fill('#comment', 'from the browser');
      await page.fill('#f-note', 'typed');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      expect(answer.status()).toBe(200);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Approved');
      const approval = await approvalOf(g);
      expect(approval).toMatchObject({ status: 'APPROVED', decidedBy: a.member.userId, comment: 'from the browser' });
      expect(approval.formData).toMatchObject({ note: 'typed' });
      const [audit] = await listAudit(g.accountId, g.approvalId);
      expect(audit).toMatchObject({ channel: 'email', userId: a.member.userId });
      expect(audit?.userAgent).toMatch(/Chrome/);

      // The same reviewer's link to another approval, once they were removed from the account.
      const removed = await linksFor(second, a.member.userId);
      expect((await fetch(`${stack.url}/api/members/${a.member.userId}`, { method: 'DELETE', headers: bearer(adminSession) })).status).toBe(
        204,
      );
      const refused = await page.goto(local(removed.review));
      expect(refused?.status()).toBe(403);
      expect(await page.locator('main').textContent()).toMatch(/no longer a member/);
      expect(await page.getByRole('button').count()).toBe(0);
      await expectUntouched(second);
    } finally {
      await context.close();
    }
  });
});
