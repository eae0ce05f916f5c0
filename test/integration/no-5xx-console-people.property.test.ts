import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { route as account } from '../../functions/http/console/settings/account/account.route.ts';
import { route as accountPassword } from '../../functions/http/console/settings/account/password.route.ts';
import { route as accountProfile } from '../../functions/http/console/settings/account/profile.route.ts';
import { route as keyCreate } from '../../functions/http/console/settings/keys/create.route.ts';
import { route as keyNew } from '../../functions/http/console/settings/keys/new.route.ts';
import { route as keyRevoke } from '../../functions/http/console/settings/keys/revoke.route.ts';
import { route as keyRevokeConfirm } from '../../functions/http/console/settings/keys/revoke-confirm.route.ts';
import { route as keys } from '../../functions/http/console/settings/keys/list.route.ts';
import { route as memberAction } from '../../functions/http/console/settings/members/action.route.ts';
import { route as memberConfirm } from '../../functions/http/console/settings/members/confirm.route.ts';
import { route as memberCreate } from '../../functions/http/console/settings/members/create.route.ts';
import { route as memberNew } from '../../functions/http/console/settings/members/new.route.ts';
import { route as members } from '../../functions/http/console/settings/members/list.route.ts';
import { handler as passwordApi } from '../../functions/http/auth/password.ts';
import { handler as profileApi } from '../../functions/http/auth/profile.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import type { Route } from '../../shared/http/route.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { b64, check, good as goodRequest, request, runsWith, sourceIp, text, ulidish } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * The API keys, members and account pages: whatever a browser (or anything else) sends to them —
 * form fields of every kind (well-formed, missing, repeated, hostile), ids of this account, another's
 * or none, the admin's or a member's session, a valid CSRF token or not — the answer is a page or a
 * redirect, never a 5xx, and every refusal is an HTML page. In-process through each route's whole stack,
 * against the real emulators; each route on a fresh account (a form may remove or demote its admin,
 * or change their password).
 */

type Handler = (e: ReturnType<typeof apiEvent>, c: never) => Promise<{ statusCode: number; headers?: Record<string, string> }>;
const ROUTES: Route[] = [
  keys,
  keyNew,
  keyCreate,
  keyRevokeConfirm,
  keyRevoke,
  members,
  memberNew,
  memberCreate,
  memberConfirm,
  memberAction,
  account,
  accountProfile,
  accountPassword,
];

const handlerOf = async (r: Route) =>
  (await import(/* @vite-ignore */ new URL(`../../functions/${r.handler}.ts`, import.meta.url).href)).handler as Handler;

/** A form field's value: what the forms send, near misses, and anything. */
const value = (ids: string[]) =>
  fc.oneof(
    fc.constantFrom(
      '',
      'Deploy bot',
      'WORKFLOW_READ',
      'APPROVAL_RESPOND',
      'admin',
      'member',
      'owner',
      'true',
      '1',
      '0',
      '365',
      '366',
      '-1',
      '1e3',
      '30.5',
      'U0123ABCD',
      PASSWORD,
      'a new password 123',
      crypto.randomUUID(),
      'not-a-uuid',
      uniqueEmail('prop'),
      'not an email',
      ...ids,
    ),
    text,
  );

type Q = {
  who: 'admin' | 'member' | 'none' | 'junk';
  csrf: 'valid' | 'other' | 'missing';
  fields: [(typeof FIELDS)[number], string][];
  raw: string | undefined;
  params: { id: string; action: string };
  query: Record<string, string> | undefined;
  base64: boolean;
  contentType: string | undefined;
  sourceIp: string;
};

const FIELDS = [
  'name',
  'scopes',
  'validityDays',
  'formId',
  'email',
  'role',
  'restoreKeys',
  'all',
  'slackUserId',
  'currentPassword',
  'newPassword',
  'confirmPassword',
] as const;

describe('no request makes a keys, members or account page answer 5xx', () => {
  for (const r of ROUTES) {
    it(`${r.method} ${r.path}`, async () => {
      const handler = await handlerOf(r);
      const [a, other] = await Promise.all([givenAccount(), givenAccount()]);
      const [adminSession, memberSession] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
      const ids = [a.admin.userId, a.member.userId, other.member.userId, a.adminKey.id, a.memberKey.id, other.adminKey.id];
      const requests: fc.Arbitrary<Q> = fc.record({
        who: fc.constantFrom('admin', 'member', 'none', 'junk'),
        csrf: fc.constantFrom('valid', 'other', 'missing'),
        fields: fc.array(fc.tuple(fc.constantFrom(...FIELDS), value(ids)), { maxLength: 10 }),
        raw: fc.option(text, { nil: undefined }),
        params: fc.record({
          id: fc.oneof(fc.constantFrom(...ids), ulidish, text),
          action: fc.oneof(fc.constantFrom('role', 'disable', 'enable', 'remove', 'revoke'), text),
        }),
        query: fc.option(fc.dictionary(fc.constantFrom('all', 'saved', 'cursor'), text, { maxKeys: 3 }), { nil: undefined }),
        base64: fc.boolean(),
        contentType: fc.option(fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain'), { nil: undefined }),
        sourceIp,
      });
      // A well-formed request of each route (the admin's, with the fields its form sends) runs first and must succeed.
      const good: Q = {
        who: 'admin',
        csrf: 'valid',
        fields: [
          ['name', 'Deploy bot'],
          ['scopes', 'WORKFLOW_READ'],
          ['validityDays', '30'],
          ['formId', crypto.randomUUID()],
          ['email', uniqueEmail('good')],
          ['role', 'member'],
          ['slackUserId', 'U0GOOD123'],
          ['currentPassword', PASSWORD],
          ['newPassword', 'a new password 123'],
          ['confirmPassword', 'a new password 123'],
        ],
        raw: undefined,
        params: { id: r.path.includes('/keys/') ? a.memberKey.id : a.member.userId, action: 'role' },
        query: undefined,
        base64: false,
        contentType: 'application/x-www-form-urlencoded',
        sourceIp: '203.0.113.7',
      };
      let goodStatus = 0;
      await fc.assert(
        fc.asyncProperty(requests, async (q) => {
          const session = q.who === 'admin' ? adminSession : q.who === 'member' ? memberSession : q.who === 'junk' ? 'dys_junk' : undefined;
          const form = new URLSearchParams(q.fields);
          if (q.csrf !== 'missing') form.set('csrf', q.csrf === 'valid' && session ? csrfToken(session) : csrfToken(`${memberSession}x`));
          const body = q.raw ?? form.toString();
          const headers: Record<string, string> = {};
          if (q.contentType) headers['content-type'] = q.contentType;
          const event = apiEvent({
            method: r.method,
            path: r.path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent((q.params[k as 'id'] ?? 'x').toWellFormed())),
            headers,
            params: q.params,
            ...(q.query ? { query: q.query } : {}),
            ...(r.method === 'POST' ? { body: q.base64 ? b64(body) : body, isBase64Encoded: q.base64 } : {}),
            sourceIp: q.sourceIp,
          });
          if (session) event.cookies = [`flowgate_session=${session}`];
          // The page's console function, given the route key API Gateway matched (its router serves that page).
          event.routeKey = `${r.method} ${r.path}`;
          const res = await handler(event, lambdaContext());
          const what = `${r.method} ${r.path} ${JSON.stringify(q).slice(0, 400)} -> ${res.statusCode}`;
          expect(res.statusCode, what).toBeLessThan(500);
          if (q === good) goodStatus = res.statusCode;
          if (res.statusCode >= 400) expect(res.headers?.['content-type'], what).toBe('text/html; charset=utf-8');
        }),
        { numRuns: 40, examples: [[good]] },
      );
      expect(goodStatus).toBeGreaterThanOrEqual(200);
      expect(goodStatus).toBeLessThan(400);
    }, 120_000);
  }
});

describe('no request makes my profile or password API answer 5xx', () => {
  const jsonBodies = (shaped: fc.Arbitrary<unknown>) =>
    fc.oneof(
      { weight: 4, arbitrary: shaped.map((v) => ({ body: JSON.stringify(v), isBase64Encoded: false })) },
      fc.jsonValue().map((v) => ({ body: JSON.stringify(v), isBase64Encoded: false })),
      text.map((t) => ({ body: t, isBase64Encoded: false })),
      fc.constant({ isBase64Encoded: false }),
    );
  const value = fc.oneof(fc.constantFrom('U0123ABCD', 'W1X2Y3', null, PASSWORD, 'a new password 123', ''), text, fc.jsonValue());

  it('PUT /api/auth/me', async () => {
    const a = await givenAccount();
    const [admin, member] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
    const auth = fc.constantFrom(`Bearer ${admin}`, `Bearer ${member}`, 'Bearer dys_junk', `Bearer ${a.adminKey.token}`);
    const shaped = fc.record({ slackUserId: value, extra: value }, { requiredKeys: [] });
    let ok = 0;
    await fc.assert(
      fc.asyncProperty(request(auth, jsonBodies(shaped)), async (req) => {
        const res = await check(profileApi, 'PUT', '/api/auth/me', req, [200, 400, 401, 409, 413, 415]);
        if (res.status === 200) ok++;
      }),
      runsWith({ numRuns: 60 }, goodRequest(`Bearer ${member}`, { json: { slackUserId: 'U0PROP123' } })),
    );
    expect(ok).toBeGreaterThan(0);
  });

  it('POST /api/auth/password', async () => {
    const a = await givenAccount();
    const member = await sessionOf(a.member.email);
    const auth = fc.constantFrom(`Bearer ${member}`, 'Bearer dys_junk', `Bearer ${a.memberKey.token}`);
    const shaped = fc.record({ currentPassword: value, newPassword: value }, { requiredKeys: [] });
    let changed = 0;
    await fc.assert(
      fc.asyncProperty(request(auth, jsonBodies(shaped)), async (req) => {
        const res = await check(passwordApi, 'POST', '/api/auth/password', req, [204, 400, 401, 413, 415]);
        if (res.status === 204) changed++;
      }),
      runsWith(
        { numRuns: 40 },
        goodRequest(`Bearer ${member}`, { json: { currentPassword: PASSWORD, newPassword: 'a new password 123' } }),
      ),
    );
    expect(changed).toBeGreaterThan(0);
  });
});
