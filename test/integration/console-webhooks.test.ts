import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/console/webhooks/create.ts';
import { handler as actionHandler } from '../../functions/http/console/webhooks/action.ts';
import { handler as pageHandler } from '../../functions/http/console/webhooks/page.ts';
import { handler as detailHandler } from '../../functions/http/console/webhooks/webhook.ts';
import { handler as listHandler } from '../../functions/http/console/webhooks/list.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { getWebhook, listWebhooks } from '../../shared/db/entities/webhook.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { newFormId } from '../../shared/domain/form-once.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * The webhook pages through their handlers in-process on the emulators: the API's permissions (a
 * member sees and changes their own webhooks only, binds only a workflow they may edit), the keys the
 * form offers (as the API's binding rule), the one-time form value (the same form sent twice creates
 * one webhook), and the secret only in the create POST's own answer (no-store), never on a later page.
 */

type Result = { statusCode: number; headers?: Record<string, string>; body?: string; isBase64Encoded?: boolean };
type Handler = (e: never, c: never) => Promise<unknown>;

async function call(handler: Handler, opts: { path: string; cookie: string; params?: Record<string, string>; form?: URLSearchParams }) {
  const event = apiEvent({
    method: opts.form ? 'POST' : 'GET',
    path: opts.path,
    ...(opts.params ? { params: opts.params } : {}),
    headers: { 'sec-fetch-site': 'same-origin', ...(opts.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(opts.form ? { body: new URLSearchParams([['csrf', csrfToken(opts.cookie)], ...opts.form]).toString() } : {}),
    sourceIp: freshIp(),
  });
  event.cookies = [`flowgate_session=${opts.cookie}`];
  const r = (await handler(event as never, lambdaContext())) as Result;
  const body = r.isBase64Encoded ? gunzipSync(Buffer.from(r.body ?? '', 'base64')).toString('utf8') : (r.body ?? '');
  return { ...r, body };
}

let a: Awaited<ReturnType<typeof givenAccount>>;
let adminCookie: string;
let memberCookie: string;
let adminsWorkflow: string;
let membersWorkflow: string;
let adminsHook: string;
let membersHook: string;

beforeAll(async () => {
  a = await givenAccount();
  const def = { steps: [{ id: 'only', type: 'set', values: {} }] };
  const admin = adminSession(a);
  adminsWorkflow = (await createWorkflow(admin, { name: 'admins', definition: def, recovery: false, editors: [] } as never)).workflowId;
  membersWorkflow = (await createWorkflow(admin, { name: 'shared', definition: def, recovery: false, editors: [a.member.userId] } as never))
    .workflowId;
  adminsHook = (
    await createWebhook(admin, { workflowId: adminsWorkflow, name: 'admins hook', authMode: 'open', allowedSourceIps: [], enabled: true })
  ).webhookId;
  const member = { ...admin, userId: a.member.userId, role: 'member' as const };
  membersHook = (
    await createWebhook(member, {
      workflowId: membersWorkflow,
      name: 'members hook',
      apiKeyId: a.memberKey.id,
      allowedSourceIps: [],
      enabled: true,
    })
  ).webhookId;
  [adminCookie, memberCookie] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
});

const createForm = (fields: Record<string, string>) => new URLSearchParams({ nonce: newFormId(), ...fields });

describe('the webhook pages', () => {
  it("a member lists their own webhooks only; the admin's is a 404 to them, to read, edit, disable or delete", async () => {
    const list = await call(listHandler as Handler, { path: '/console/webhooks', cookie: memberCookie });
    expect(list.body).toContain('members hook');
    expect(list.body).not.toContain('admins hook');
    const adminList = await call(listHandler as Handler, { path: '/console/webhooks', cookie: adminCookie });
    expect(adminList.body).toContain('members hook');
    expect(adminList.body).toContain('admins hook');
    expect(
      (await call(detailHandler as Handler, { path: `/console/webhooks/${adminsHook}`, params: { id: adminsHook }, cookie: memberCookie }))
        .statusCode,
    ).toBe(404);
    for (const page of ['edit', 'delete'])
      expect(
        (
          await call(pageHandler as Handler, {
            path: `/console/webhooks/${adminsHook}/${page}`,
            params: { id: adminsHook, page },
            cookie: memberCookie,
          })
        ).statusCode,
      ).toBe(404);
    for (const action of ['disable', 'delete', 'edit']) {
      const res = await call(actionHandler as Handler, {
        path: `/console/webhooks/${adminsHook}/${action}`,
        params: { id: adminsHook, action },
        cookie: memberCookie,
        form: new URLSearchParams({ name: 'taken over', auth: 'open', openConfirm: 'yes' }),
      });
      expect(res.statusCode, action).toBe(404);
    }
    const after = await getWebhook(adminsHook);
    expect(after).toMatchObject({ name: 'admins hook', enabled: true });
  });

  it("a member binding a webhook to a workflow they may not edit gets the API's 403 at the workflow field, and nothing is made", async () => {
    const before = (await listWebhooks(a.account.accountId)).length;
    const res = await call(createHandler as Handler, {
      path: '/console/webhooks',
      cookie: memberCookie,
      form: createForm({ workflowId: adminsWorkflow, name: 'not mine', auth: 'open', openConfirm: 'yes' }),
    });
    expect(res.statusCode).toBe(403);
    expect(res.body).toMatch(/id="wh-workflowId-error"[^>]*>You need edit permission on the workflow/);
    expect(res.body).toContain('value="not mine"');
    expect((await listWebhooks(a.account.accountId)).length).toBe(before);
  });

  it('a form that chooses no way to authenticate says so at the choices, focused, and makes nothing', async () => {
    const before = (await listWebhooks(a.account.accountId)).length;
    const res = await call(createHandler as Handler, {
      path: '/console/webhooks',
      cookie: adminCookie,
      form: createForm({ workflowId: adminsWorkflow, name: 'undecided' }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/id="wh-auth-error"[^>]*>choose how callers authenticate</);
    // The first choice has the focus and names the error; none is checked.
    expect(res.body).toMatch(
      /<input type="radio" name="auth" value="api_key" autofocus aria-invalid="true" aria-describedby="wh-auth-error"/,
    );
    expect(res.body).not.toMatch(/name="auth"[^>]*checked/);
    expect((await listWebhooks(a.account.accountId)).length).toBe(before);
  });

  it("the form offers the keys the API binds: the member's own for their webhook; editing it, an admin also theirs", async () => {
    const readOnlyKey = await createKey(
      { accountId: a.account.accountId, userId: a.member.userId },
      { name: 'no trigger', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    );
    const memberEdit = await call(pageHandler as Handler, {
      path: `/console/webhooks/${membersHook}/edit`,
      params: { id: membersHook, page: 'edit' },
      cookie: memberCookie,
    });
    expect(memberEdit.body).toContain(`value="${a.memberKey.id}"`);
    expect(memberEdit.body).not.toContain(`value="${a.adminKey.id}"`);
    expect(memberEdit.body).not.toContain(`value="${readOnlyKey.id}"`);
    const adminEdit = await call(pageHandler as Handler, {
      path: `/console/webhooks/${membersHook}/edit`,
      params: { id: membersHook, page: 'edit' },
      cookie: adminCookie,
    });
    expect(adminEdit.body).toContain(`value="${a.memberKey.id}"`);
    expect(adminEdit.body).toContain(`value="${a.adminKey.id}"`);
    // The admin rebinds the member's webhook to the admin's own key, as the API allows.
    const saved = await call(actionHandler as Handler, {
      path: `/console/webhooks/${membersHook}/edit`,
      params: { id: membersHook, action: 'edit' },
      cookie: adminCookie,
      form: new URLSearchParams({ name: 'members hook', auth: 'api_key', apiKeyId: a.adminKey.id }),
    });
    expect(saved.statusCode, saved.body).toBe(303);
    expect((await getWebhook(membersHook))?.apiKeyId).toBe(a.adminKey.id);
  });

  it('the same create form sent twice makes one webhook; the secret is in the first answer only (no-store), never on its page', async () => {
    const form = createForm({ workflowId: adminsWorkflow, name: 'once', auth: 'sender', signatureScheme: 'standard-webhooks' });
    const before = (await listWebhooks(a.account.accountId)).length;
    const [first, second] = await Promise.all([
      call(createHandler as Handler, { path: '/console/webhooks', cookie: adminCookie, form }),
      call(createHandler as Handler, { path: '/console/webhooks', cookie: adminCookie, form }),
    ]);
    const made = [first, second].find((r) => r.statusCode === 201);
    const refused = [first, second].find((r) => r.statusCode === 409);
    expect(made?.headers?.['cache-control']).toBe('no-store');
    expect(refused?.body).toContain('This form was sent already');
    const secret = /id="webhook-secret">(whsec_[A-Za-z0-9+/=]+)</.exec(made?.body ?? '')?.[1] as string;
    expect(secret).toBeDefined();
    expect(refused?.body).not.toContain(secret);
    const hooks = await listWebhooks(a.account.accountId);
    expect(hooks.length).toBe(before + 1);
    const hook = hooks.find((h) => h.name === 'once');
    expect(hook).toMatchObject({ secretKey: secret, signatureScheme: 'standard-webhooks' });
    const id = hook?.webhookId as string;
    for (const path of [`/console/webhooks/${id}`, `/console/webhooks/${id}/edit`]) {
      const res = await call((path.endsWith('edit') ? pageHandler : detailHandler) as Handler, {
        path,
        params: { id, page: 'edit' },
        cookie: adminCookie,
      });
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain(secret);
    }
    // A third send, later: still refused, and nothing more is made.
    const third = await call(createHandler as Handler, { path: '/console/webhooks', cookie: adminCookie, form });
    expect(third.statusCode).toBe(409);
    expect((await listWebhooks(a.account.accountId)).length).toBe(before + 1);
  });
});
