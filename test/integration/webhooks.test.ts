import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/webhooks/create.ts';
import { handler as deleteHandler } from '../../functions/http/webhooks/delete.ts';
import { handler as getHandler } from '../../functions/http/webhooks/get.ts';
import { handler as listHandler } from '../../functions/http/webhooks/list.ts';
import { handler as statsHandler } from '../../functions/http/webhooks/stats.ts';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { handler as updateHandler } from '../../functions/http/webhooks/update.ts';
import type { Plan } from '../../shared/config.ts';
import { setPlan } from '../../shared/db/entities/account.ts';
import { putApiKey } from '../../shared/db/entities/api-key.ts';
import { getWebhook } from '../../shared/db/entities/webhook.ts';
import type { User } from '../../shared/db/entities/user.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { createKey, revokeKey } from '../../shared/domain/keys.ts';
import { createWorkflow, removeWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { newTokenId } from '../../shared/ids.ts';
import { WebhookStats, WebhookView } from '../../shared/schemas/webhooks.ts';
import { givenAccount, openUnlessKeyed, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/** Webhook management (docs/webhooks.md, spec "Webhook management"), through the handlers with console sessions. */

const DAY = 86_400_000;

const post = (session: string, body: unknown) =>
  invoke(createHandler, apiEvent({ method: 'POST', path: '/api/webhooks', headers: bearer(session), body: body as object }));
const api = {
  /** Open on purpose when the body names no credential (the cases below are not about the mode). */
  create: (session: string, body: unknown) => post(session, openUnlessKeyed(body as Record<string, unknown>)),
  /** Exactly the body given. */
  post,
  list: (session: string) => invoke(listHandler, apiEvent({ path: '/api/webhooks', headers: bearer(session) })),
  get: (session: string, id: string) =>
    invoke(getHandler, apiEvent({ path: `/api/webhooks/${id}`, headers: bearer(session), params: { id } })),
  update: (session: string, id: string, body: unknown) =>
    invoke(
      updateHandler,
      apiEvent({ method: 'PUT', path: `/api/webhooks/${id}`, headers: bearer(session), params: { id }, body: body as object }),
    ),
  remove: (session: string, id: string) =>
    invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/webhooks/${id}`, headers: bearer(session), params: { id } })),
  stats: (session: string, id: string) =>
    invoke(statsHandler, apiEvent({ path: `/api/webhooks/${id}/stats`, headers: bearer(session), params: { id } })),
};

type Res = Awaited<ReturnType<typeof invoke>>;
const ids = (res: Res): string[] => res.json.items.map((w: { id: string }) => w.id);
const paths = (res: Res): string[] => (res.json.errors ?? []).map((e: { path: string }) => e.path);

const DEFINITION = WorkflowDefinition.parse({ steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }] });
const workflowOf = (owner: Pick<User, 'accountId' | 'userId' | 'role'>, editors: string[] = []) =>
  createWorkflow(owner, { name: `wf-${randomBytes(3).toString('hex')}`, definition: DEFINITION, recovery: false, editors });

/**
 * An account with an admin, two members (each with an all-scope key), sessions for all three, a
 * workflow owned by the admin and one owned by the first member.
 */
async function givenTeam(plan: Plan = 'team') {
  const a = await givenAccount({ plan });
  const member2 = await createUser(a.account.accountId, uniqueEmail('member2'), PASSWORD, 'member');
  const member2Key = await createKey(member2, { name: 'member2 key', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
  const [adminSession, memberSession, member2Session, adminWf, memberWf] = await Promise.all([
    sessionOf(a.admin.email),
    sessionOf(a.member.email),
    sessionOf(member2.email),
    workflowOf(a.admin),
    workflowOf(a.member),
  ]);
  return { ...a, member2, member2Key, adminSession, memberSession, member2Session, adminWf, memberWf };
}

const SECRET = () => `hmac-secret-${randomBytes(12).toString('hex')}`;

describe('create', () => {
  it('answers 201 with Location and the full webhook, without the secret', async () => {
    const t = await givenTeam();
    const secret = SECRET();
    const body = {
      workflowId: t.memberWf.workflowId,
      name: 'orders',
      apiKeyId: t.memberKey.id,
      secretKey: secret,
      variableMapping: { orderId: 'id', amount: 'total' },
      allowedSourceIps: ['203.0.113.0/24'],
    };
    const before = Date.now();
    const res = await api.create(t.memberSession, body);
    expect(res.status, res.body).toBe(201);
    expect(res.headers.location).toBe(`/api/webhooks/${res.json.id}`);
    expect(res.json.id).toMatch(/^wh_[0-9a-z]{26}$/);
    expect(Object.keys(res.json).sort()).toEqual(
      [
        'id',
        'workflowId',
        'name',
        'apiKeyId',
        'hasSecretKey',
        'authMode',
        'open',
        'signatureScheme',
        'variableMapping',
        'allowedSourceIps',
        'enabled',
        'createdBy',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(WebhookView.parse(res.json)).toEqual(res.json);
    expect(res.json).toMatchObject({
      workflowId: t.memberWf.workflowId,
      name: 'orders',
      apiKeyId: t.memberKey.id,
      hasSecretKey: true,
      authMode: 'api_key',
      open: false,
      variableMapping: { orderId: 'id', amount: 'total' },
      allowedSourceIps: ['203.0.113.0/24'],
      enabled: true,
      createdBy: t.member.userId,
    });
    expect(res.json.createdAt).toBeGreaterThanOrEqual(before);
    expect(res.json.updatedAt).toBe(res.json.createdAt);

    // The secret is in no response: create, get, list (member and admin), update.
    const got = await api.get(t.memberSession, res.json.id);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);
    const listed = await api.list(t.memberSession);
    const adminListed = await api.list(t.adminSession);
    const updated = await api.update(t.memberSession, res.json.id, { name: 'orders v2' });
    expect(updated.status).toBe(200);
    for (const r of [res, got, listed, adminListed, updated]) {
      expect(r.body).not.toContain(secret);
      expect(r.body).not.toContain('secretKey"');
    }
  });

  it('sets authMode by the inputs: api_key, hmac or open', async () => {
    const t = await givenTeam();
    const wf = t.memberWf.workflowId;
    const cases = [
      [{ apiKeyId: t.memberKey.id }, 'api_key', t.memberKey.id, false],
      [{ apiKeyId: t.memberKey.id, secretKey: SECRET() }, 'api_key', t.memberKey.id, true],
      [{ secretKey: SECRET() }, 'hmac', null, true],
      [{}, 'open', null, false],
    ] as const;
    for (const [extra, mode, apiKeyId, hasSecretKey] of cases) {
      const res = await api.create(t.memberSession, { workflowId: wf, name: mode, ...extra });
      expect(res.status, res.body).toBe(201);
      expect(res.json).toMatchObject({
        authMode: mode,
        apiKeyId,
        hasSecretKey,
        variableMapping: null,
        allowedSourceIps: [],
        enabled: true,
      });
    }
    const disabled = await api.create(t.memberSession, { workflowId: wf, name: 'off', enabled: false });
    expect(disabled.json.enabled).toBe(false);
  });

  it('refuses unknown fields with 400 VALIDATION_FAILED naming each, on create and update, writing nothing', async () => {
    const t = await givenTeam();
    const wf = t.memberWf.workflowId;
    // `secret` is a typo for `secretKey`: dropped, it would have meant another webhook.
    const typo = await api.post(t.memberSession, {
      workflowId: wf,
      name: 'typo',
      signatureScheme: 'stripe',
      secret: 'whsec_abcdefghijklmnop',
    });
    expectProblem(typo, 400, 'VALIDATION_FAILED');
    expect(typo.json.errors).toEqual([{ path: 'secret', message: 'unrecognized key "secret"' }]);
    expect(ids(await api.list(t.memberSession))).toEqual([]);
    const made = await api.create(t.memberSession, { workflowId: wf, name: 'ok', apiKeyId: t.memberKey.id });
    expect(made.status, made.body).toBe(201);
    const bad = await api.update(t.memberSession, made.json.id, { name: 'renamed', enabeld: false, other: 1 });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    expect(paths(bad).sort()).toEqual(['enabeld', 'other']);
    expect((await api.get(t.memberSession, made.json.id)).json).toMatchObject({ name: 'ok', enabled: true });
  });

  it('is never open by accident: no key and no secret is 400 CREDENTIALS_REQUIRED unless authMode "open" is said; a scheme needs its secret', async () => {
    const t = await givenTeam();
    const wf = t.memberWf.workflowId;
    const bare = await api.post(t.memberSession, { workflowId: wf, name: 'bare' });
    expectProblem(bare, 400, 'CREDENTIALS_REQUIRED');
    expect(paths(bare)).toEqual(['authMode']);
    const schemeOnly = await api.post(t.memberSession, { workflowId: wf, name: 'stripe', signatureScheme: 'stripe' });
    expectProblem(schemeOnly, 400, 'SECRET_REQUIRED');
    expect(paths(schemeOnly)).toEqual(['secretKey']);
    // Even with a bound key: a scheme signs with a secret.
    expectProblem(
      await api.post(t.memberSession, { workflowId: wf, name: 'k', apiKeyId: t.memberKey.id, signatureScheme: 'github' }),
      400,
      'SECRET_REQUIRED',
    );
    // A requested mode must be the one the request makes.
    for (const body of [
      { authMode: 'open', apiKeyId: t.memberKey.id },
      { authMode: 'open', secretKey: SECRET() },
      { authMode: 'hmac', apiKeyId: t.memberKey.id, secretKey: SECRET() },
      { authMode: 'api_key', secretKey: SECRET() },
      { authMode: 'hmac' },
    ]) {
      const res = await api.post(t.memberSession, { workflowId: wf, name: 'mismatch', ...body });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res), JSON.stringify(body)).toEqual(['authMode']);
    }
    expect(ids(await api.list(t.memberSession))).toEqual([]);
    // On purpose: created, and flagged in the view and the list.
    const open = await api.post(t.memberSession, { workflowId: wf, name: 'open', authMode: 'open' });
    expect(open.status, open.body).toBe(201);
    expect(open.json).toMatchObject({ authMode: 'open', open: true, apiKeyId: null, hasSecretKey: false, signatureScheme: null });
    expect((await api.list(t.memberSession)).json.items).toEqual([expect.objectContaining({ id: open.json.id, open: true })]);
    const hmac = await api.post(t.memberSession, {
      workflowId: wf,
      name: 'h',
      authMode: 'hmac',
      secretKey: SECRET(),
      signatureScheme: 'slack',
    });
    expect(hmac.json).toMatchObject({ authMode: 'hmac', open: false, signatureScheme: 'slack' });
  });

  it('update: never open by accident, open only when asked (dropping key and secret), a scheme only with a secret', async () => {
    const t = await givenTeam();
    const wf = t.memberWf.workflowId;
    const keyed = (await api.post(t.memberSession, { workflowId: wf, name: 'k', apiKeyId: t.memberKey.id })).json;
    const secret = SECRET();
    // Key to HMAC in one request: it never passes through open.
    const toHmac = await api.update(t.memberSession, keyed.id, { clearApiKeyId: true, secretKey: secret, signatureScheme: 'github' });
    expect(toHmac.json).toMatchObject({ authMode: 'hmac', open: false, signatureScheme: 'github' });
    const open = await api.post(t.memberSession, { workflowId: wf, name: 'o', authMode: 'open' });
    expectProblem(await api.update(t.memberSession, open.json.id, { signatureScheme: 'stripe' }), 400, 'SECRET_REQUIRED');
    // Open to HMAC in one request, with its scheme.
    const signed = await api.update(t.memberSession, open.json.id, { secretKey: secret, signatureScheme: 'stripe' });
    expect(signed.json).toMatchObject({ authMode: 'hmac', signatureScheme: 'stripe', open: false });
    // Back to open only when asked, and then key and secret are gone.
    expectProblem(await api.update(t.memberSession, open.json.id, { authMode: 'open', secretKey: SECRET() }), 400, 'VALIDATION_FAILED');
    expect((await api.get(t.memberSession, open.json.id)).json).toMatchObject({ authMode: 'hmac', hasSecretKey: true });
    const reopened = await api.update(t.memberSession, open.json.id, { authMode: 'open' });
    expect(reopened.json).toMatchObject({ authMode: 'open', open: true, hasSecretKey: false, apiKeyId: null, signatureScheme: null });
    // An open webhook's other fields change without saying it again; a key-bound one goes open only when asked.
    expect((await api.update(t.memberSession, open.json.id, { enabled: false })).json).toMatchObject({ enabled: false, open: true });
    const dropped = await api.update(t.memberSession, toHmac.json.id, { authMode: 'open' });
    expect(dropped.json).toMatchObject({ authMode: 'open', hasSecretKey: false, signatureScheme: null });
  });

  it('round-trips the write-only secret: PUT of what the view shows keeps the stored secretKey and the mode', async () => {
    const t = await givenTeam();
    const secret = SECRET();
    const made = await api.post(t.memberSession, {
      workflowId: t.memberWf.workflowId,
      name: 'rt',
      secretKey: secret,
      signatureScheme: 'github',
    });
    const view = (await api.get(t.memberSession, made.json.id)).json;
    const { name, variableMapping, allowedSourceIps, enabled, signatureScheme, authMode } = view;
    const res = await api.update(t.memberSession, view.id, { name, variableMapping, allowedSourceIps, enabled, signatureScheme, authMode });
    expect(res.status, res.body).toBe(200);
    expect({ ...res.json, updatedAt: 0 }).toEqual({ ...view, updatedAt: 0 });
    expect((await getWebhook(view.id))?.secretKey).toBe(secret);
  });

  it('requires workflowId and a name (400, nothing written)', async () => {
    const t = await givenTeam();
    for (const [body, path] of [
      [{ name: 'x' }, 'workflowId'],
      [{ workflowId: 42, name: 'x' }, 'workflowId'],
      [{ workflowId: t.memberWf.workflowId }, 'name'],
      [{ workflowId: t.memberWf.workflowId, name: '   ' }, 'name'],
    ] as const) {
      const res = await api.create(t.memberSession, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res), JSON.stringify(body)).toContain(path);
    }
    // An empty or malformed workflow id is an unknown one.
    expectProblem(await api.create(t.memberSession, { workflowId: '', name: 'x' }), 404, 'WORKFLOW_NOT_FOUND');
    expect(ids(await api.list(t.adminSession))).toEqual([]);
  });

  it('needs edit permission on the workflow: owner, listed editor or admin; others 403', async () => {
    const t = await givenTeam();
    // A member who neither owns nor edits the admin's workflow.
    expectProblem(await api.create(t.memberSession, { workflowId: t.adminWf.workflowId, name: 'x' }), 403, 'NOT_WORKFLOW_EDITOR');
    // ... nor the other member's.
    expectProblem(await api.create(t.member2Session, { workflowId: t.memberWf.workflowId, name: 'x' }), 403, 'NOT_WORKFLOW_EDITOR');
    expect(ids(await api.list(t.adminSession))).toEqual([]);

    // A listed editor may.
    const shared = await workflowOf(t.admin, [t.member2.userId]);
    const byEditor = await api.create(t.member2Session, { workflowId: shared.workflowId, name: 'editor', apiKeyId: t.member2Key.id });
    expect(byEditor.status, byEditor.body).toBe(201);
    expect(byEditor.json.createdBy).toBe(t.member2.userId);
    // The admin may bind any workflow of the account.
    expect((await api.create(t.adminSession, { workflowId: t.memberWf.workflowId, name: 'admin' })).status).toBe(201);
  });

  it("answers 404 for another account's workflow and for an unknown one", async () => {
    const t = await givenTeam();
    const other = await givenTeam();
    expectProblem(await api.create(t.adminSession, { workflowId: other.adminWf.workflowId, name: 'x' }), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await api.create(t.adminSession, { workflowId: `wf_${newTokenId()}`, name: 'x' }), 404, 'WORKFLOW_NOT_FOUND');
    expect(ids(await api.list(t.adminSession))).toEqual([]);
    expect(ids(await api.list(other.adminSession))).toEqual([]);
  });
});

describe('API key binding', () => {
  it('refuses keys the creator may not bind (400 INVALID_API_KEY_BINDING), writing nothing', async () => {
    const t = await givenTeam();
    const other = await givenAccount();
    const revoked = await createKey(t.member, { name: 'revoked', scopes: ['WEBHOOK_TRIGGER'], validityDays: 30 });
    await revokeKey(
      { kind: 'session', accountId: t.account.accountId, userId: t.member.userId, role: 'member', sessionId: 'x' },
      revoked.id,
    );
    const expiredId = newTokenId();
    await putApiKey({
      keyId: expiredId,
      accountId: t.account.accountId,
      ownerId: t.member.userId,
      name: 'expired',
      scopes: ['WEBHOOK_TRIGGER'],
      tokenHash: 'unused',
      createdAt: Date.now() - 10 * DAY,
      expiresAt: Date.now() - DAY,
      usageTotal: 0,
      usageToday: 0,
    });
    const noTrigger = await createKey(t.member, { name: 'read only', scopes: ['WORKFLOW_READ', 'WORKFLOW_EXECUTE'], validityDays: 30 });

    for (const [what, apiKeyId] of [
      ["the admin's key", t.adminKey.id],
      ["another member's key", t.member2Key.id],
      ['a revoked key', revoked.id],
      ['an expired key', expiredId],
      ['a key without WEBHOOK_TRIGGER', noTrigger.id],
      ["another account's key", other.memberKey.id],
      ['an unknown key id', newTokenId()],
    ] as const) {
      const res = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'x', apiKeyId });
      expectProblem(res, 400, 'INVALID_API_KEY_BINDING');
      expect(paths(res), what).toEqual(['apiKeyId']);
    }
    // A malformed id is refused like an unknown one.
    expectProblem(
      await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'x', apiKeyId: 'nope' }),
      400,
      'INVALID_API_KEY_BINDING',
    );
    expect(ids(await api.list(t.adminSession))).toEqual([]);

    // The member's own active WEBHOOK_TRIGGER key works.
    const own = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'own', apiKeyId: t.memberKey.id });
    expect(own.status, own.body).toBe(201);
    expect(own.json.apiKeyId).toBe(t.memberKey.id);
  });

  it("lets an admin managing a member's webhook bind the admin's key or the member's; a member may not bind the admin's", async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'm', apiKeyId: t.memberKey.id });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    const toAdminKey = await api.update(t.adminSession, id, { apiKeyId: t.adminKey.id });
    expect(toAdminKey.status, toAdminKey.body).toBe(200);
    expect(toAdminKey.json).toMatchObject({ apiKeyId: t.adminKey.id, authMode: 'api_key', createdBy: t.member.userId });

    const backToMemberKey = await api.update(t.adminSession, id, { apiKeyId: t.memberKey.id });
    expect(backToMemberKey.status, backToMemberKey.body).toBe(200);
    expect(backToMemberKey.json.apiKeyId).toBe(t.memberKey.id);

    // But not a third user's key, even as admin.
    expectProblem(await api.update(t.adminSession, id, { apiKeyId: t.member2Key.id }), 400, 'INVALID_API_KEY_BINDING');

    // The member may not bind the admin's key on their own webhook.
    expectProblem(await api.update(t.memberSession, id, { apiKeyId: t.adminKey.id }), 400, 'INVALID_API_KEY_BINDING');
    expect((await api.get(t.memberSession, id)).json.apiKeyId).toBe(t.memberKey.id);

    // An admin's own webhook takes the admin's key, not a member's.
    const adminOwn = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'a', apiKeyId: t.adminKey.id });
    expect(adminOwn.status).toBe(201);
    expectProblem(
      await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'a', apiKeyId: t.memberKey.id }),
      400,
      'INVALID_API_KEY_BINDING',
    );
  });
});

describe('allowedSourceIps', () => {
  it('accepts IPv4, IPv6 and CIDR entries of either, up to 100', async () => {
    const t = await givenTeam('enterprise');
    const good = ['1.2.3.4', '10.0.0.0/8', '2001:db8::1', '2001:db8::/32', '::ffff:7f00:1', '0.0.0.0/0', '::/0', '255.255.255.255/32'];
    const res = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'ips', allowedSourceIps: good });
    expect(res.status, res.body).toBe(201);
    expect(res.json.allowedSourceIps).toEqual(good);
    expect((await api.get(t.adminSession, res.json.id)).json.allowedSourceIps).toEqual(good);

    const hundred = Array.from({ length: 100 }, (_, i) => `10.0.${i}.1`);
    const max = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: '100', allowedSourceIps: hundred });
    expect(max.status, max.body).toBe(201);
    expect(max.json.allowedSourceIps).toHaveLength(100);

    const updated = await api.update(t.adminSession, res.json.id, { allowedSourceIps: ['192.0.2.0/24'] });
    expect(updated.json.allowedSourceIps).toEqual(['192.0.2.0/24']);
    const cleared = await api.update(t.adminSession, res.json.id, { allowedSourceIps: [] });
    expect(cleared.json.allowedSourceIps).toEqual([]);
  });

  it('refuses shorthand, octal, hex, out-of-range and malformed entries and more than 100 (400 at the entry), writing nothing', async () => {
    const t = await givenTeam('enterprise');
    const existing = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'keep', allowedSourceIps: ['1.2.3.4'] });
    expect(existing.status).toBe(201);
    for (const bad of [
      '127.1',
      '017700000001',
      '0x7f.0.0.1',
      '1.2.3.4/33',
      '300.1.1.1',
      'abc',
      '10.0.0.0/8/1',
      '',
      '2001:db8::/129',
      '01.2.3.4',
      'fe80::1%eth0',
      'fe80::%1/64',
    ]) {
      const body = { workflowId: t.adminWf.workflowId, name: 'x', allowedSourceIps: ['192.0.2.1', bad] };
      const res = await api.create(t.adminSession, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(paths(res), bad).toEqual(['allowedSourceIps.1']);
      const upd = await api.update(t.adminSession, existing.json.id, { allowedSourceIps: [bad] });
      expectProblem(upd, 400, 'VALIDATION_FAILED');
      expect(paths(upd), bad).toEqual(['allowedSourceIps.0']);
    }
    const tooMany = Array.from({ length: 101 }, (_, i) => `10.1.${i}.1`);
    const res = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'x', allowedSourceIps: tooMany });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(paths(res)).toEqual(['allowedSourceIps']);
    expectProblem(await api.update(t.adminSession, existing.json.id, { allowedSourceIps: tooMany }), 400, 'VALIDATION_FAILED');

    const listed = await api.list(t.adminSession);
    expect(ids(listed)).toEqual([existing.json.id]);
    expect(listed.json.items[0]).toEqual(existing.json);
  });

  it('refuses an IPv6 entry whose embedded IPv4 is not dotted decimal (::ffff:0x7f.0.0.1)', async () => {
    // RFC 4291 §2.2 (x:x:x:x:x:x:d.d.d.d with decimal d) and the schema's own rule that hex/octal
    // IPv4 forms are refused; ipaddr.js alone reads `0x7f` as 127.
    const t = await givenTeam('enterprise');
    for (const bad of ['::ffff:0x7f.0.0.1', '::ffff:0177.0.0.1', '::ffff:0x7f.0.0.1/128']) {
      const res = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'x', allowedSourceIps: [bad] });
      expect(res.status, `${bad}: ${res.body}`).toBe(400);
      expect(paths(res)).toEqual(['allowedSourceIps.0']);
    }
  });
});

describe('update', () => {
  it('renames, disables and enables, sets and clears variableMapping', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'before', apiKeyId: t.memberKey.id });
    const id = created.json.id as string;
    await new Promise((r) => setTimeout(r, 2));

    const renamed = await api.update(t.memberSession, id, { name: '  after  ' });
    expect(renamed.status, renamed.body).toBe(200);
    expect(renamed.json).toMatchObject({ id, name: 'after', apiKeyId: t.memberKey.id, enabled: true, createdAt: created.json.createdAt });
    expect(renamed.json.updatedAt).toBeGreaterThan(created.json.updatedAt);

    expect((await api.update(t.memberSession, id, { enabled: false })).json.enabled).toBe(false);
    expect((await api.get(t.memberSession, id)).json.enabled).toBe(false);
    expect((await api.update(t.memberSession, id, { enabled: true })).json.enabled).toBe(true);

    const mapped = await api.update(t.memberSession, id, { variableMapping: { orderId: 'id' } });
    expect(mapped.json.variableMapping).toEqual({ orderId: 'id' });
    expect((await api.get(t.memberSession, id)).json.variableMapping).toEqual({ orderId: 'id' });
    const cleared = await api.update(t.memberSession, id, { variableMapping: null });
    expect(cleared.status, cleared.body).toBe(200);
    expect(cleared.json.variableMapping).toBeNull();
    expect((await api.get(t.memberSession, id)).json).toMatchObject({ name: 'after', variableMapping: null, enabled: true });

    const badMapping = await api.update(t.memberSession, id, { variableMapping: { 'not a var': 'x' } });
    expectProblem(badMapping, 400, 'VALIDATION_FAILED');
  });

  it('clearApiKeyId with secretKey switches to HMAC; without secretKey it is 400 and nothing changes', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'k', apiKeyId: t.memberKey.id });
    const id = created.json.id as string;

    const refused = await api.update(t.memberSession, id, { clearApiKeyId: true });
    expectProblem(refused, 400, 'VALIDATION_FAILED');
    expect(paths(refused)).toContain('secretKey');
    expect((await api.get(t.memberSession, id)).json).toEqual(created.json);

    const both = await api.update(t.memberSession, id, { clearApiKeyId: true, apiKeyId: t.memberKey.id, secretKey: SECRET() });
    expectProblem(both, 400, 'VALIDATION_FAILED');
    expect((await api.get(t.memberSession, id)).json).toEqual(created.json);

    const secret = SECRET();
    const switched = await api.update(t.memberSession, id, { clearApiKeyId: true, secretKey: secret });
    expect(switched.status, switched.body).toBe(200);
    expect(switched.json).toMatchObject({ apiKeyId: null, hasSecretKey: true, authMode: 'hmac' });
    expect(switched.body).not.toContain(secret);
    const got = await api.get(t.memberSession, id);
    expect(got.json).toMatchObject({ apiKeyId: null, hasSecretKey: true, authMode: 'hmac' });
    expect(got.body).not.toContain(secret);

    // Binding a key again wins over the secret.
    const rebound = await api.update(t.memberSession, id, { apiKeyId: t.memberKey.id });
    expect(rebound.json).toMatchObject({ apiKeyId: t.memberKey.id, hasSecretKey: true, authMode: 'api_key' });
  });

  it('secretKey alone on a key-bound webhook keeps api_key mode; an empty body is 400', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'k', apiKeyId: t.memberKey.id });
    const id = created.json.id as string;
    const secret = SECRET();
    const res = await api.update(t.memberSession, id, { secretKey: secret });
    expect(res.status, res.body).toBe(200);
    expect(res.json).toMatchObject({ apiKeyId: t.memberKey.id, hasSecretKey: true, authMode: 'api_key' });
    expect(res.body).not.toContain(secret);
    expect((await api.list(t.memberSession)).body).not.toContain(secret);

    const before = (await api.get(t.memberSession, id)).json;
    expectProblem(await api.update(t.memberSession, id, {}), 400, 'VALIDATION_FAILED');
    expectProblem(await api.update(t.memberSession, id, ''), 400, 'VALIDATION_FAILED');
    expectProblem(await api.update(t.memberSession, id, { secretKey: 'short' }), 400, 'VALIDATION_FAILED');
    expect((await api.get(t.memberSession, id)).json).toEqual(before);
  });
});

describe('visibility', () => {
  it('members see their own webhooks, admins the whole account; others are 404', async () => {
    const t = await givenTeam();
    const other = await givenTeam();
    const shared = await workflowOf(t.admin, [t.member.userId, t.member2.userId]);
    const mine = await api.create(t.memberSession, { workflowId: shared.workflowId, name: 'm1' });
    const theirs = await api.create(t.member2Session, { workflowId: shared.workflowId, name: 'm2' });
    const admins = await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'a' });
    const foreign = await api.create(other.adminSession, { workflowId: other.adminWf.workflowId, name: 'o' });
    for (const r of [mine, theirs, admins, foreign]) expect(r.status, r.body).toBe(201);

    expect(ids(await api.list(t.memberSession))).toEqual([mine.json.id]);
    expect(ids(await api.list(t.member2Session))).toEqual([theirs.json.id]);
    const all = await api.list(t.adminSession);
    expect(ids(all).sort()).toEqual([mine.json.id, theirs.json.id, admins.json.id].sort());
    expect(all.json.nextCursor).toBeNull();
    expect(ids(await api.list(other.adminSession))).toEqual([foreign.json.id]);

    // A member reaching another member's webhook, or the admin's: 404 on every verb.
    for (const id of [theirs.json.id, admins.json.id, foreign.json.id]) {
      expectProblem(await api.get(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.update(t.memberSession, id, { name: 'hijack' }), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.stats(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.remove(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
    }
    // Another account's admin: 404 as well.
    for (const id of [mine.json.id, admins.json.id]) {
      expectProblem(await api.get(other.adminSession, id), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.update(other.adminSession, id, { enabled: false }), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.stats(other.adminSession, id), 404, 'WEBHOOK_NOT_FOUND');
      expectProblem(await api.remove(other.adminSession, id), 404, 'WEBHOOK_NOT_FOUND');
    }
    // Nothing changed.
    expect((await api.get(t.member2Session, theirs.json.id)).json).toEqual(theirs.json);
    expect((await api.get(t.adminSession, admins.json.id)).json).toEqual(admins.json);
    expect((await api.get(t.adminSession, mine.json.id)).json).toEqual(mine.json);

    // The admin manages the member's webhook.
    expect((await api.get(t.adminSession, mine.json.id)).status).toBe(200);
    expect((await api.update(t.adminSession, mine.json.id, { name: 'by admin' })).json.name).toBe('by admin');
    expect((await api.stats(t.adminSession, mine.json.id)).status).toBe(200);

    // Malformed ids are simply not found.
    for (const id of ['nope', 'wh_', `wh_${newTokenId().toUpperCase()}`, '..', `${mine.json.id}x`, 'WH#x', `wh_${newTokenId()}`]) {
      expect((await api.get(t.adminSession, id)).status, id).toBe(404);
      expect((await api.update(t.adminSession, id, { name: 'x' })).status, id).toBe(404);
      expect((await api.remove(t.adminSession, id)).status, id).toBe(404);
      expect((await api.stats(t.adminSession, id)).status, id).toBe(404);
    }
  });

  it('requires a session: 401 without or with an API key', async () => {
    const t = await givenTeam();
    const none = await invoke(listHandler, apiEvent({ path: '/api/webhooks' }));
    expectProblem(none, 401, 'UNAUTHORIZED');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect((await api.create(t.adminKey.token, { workflowId: t.adminWf.workflowId, name: 'x' })).status).toBe(401);
  });
});

describe('plan limits', () => {
  const create = (t: Awaited<ReturnType<typeof givenTeam>>, name: string) =>
    api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name });

  it('free allows none; an upgrade to pro allows exactly 3', async () => {
    const t = await givenTeam('free');
    expectProblem(await create(t, 'first'), 403, 'PLAN_LIMIT_REACHED');
    expect(ids(await api.list(t.adminSession))).toEqual([]);

    await setPlan(t.account.accountId, 'pro');
    for (let i = 0; i < 3; i++) expect((await create(t, `w${i}`)).status).toBe(201);
    expectProblem(await create(t, 'fourth'), 403, 'PLAN_LIMIT_REACHED');
    // Members count towards the same account limit.
    expectProblem(await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'm' }), 403, 'PLAN_LIMIT_REACHED');
    expect(ids(await api.list(t.adminSession))).toHaveLength(3);
  });

  it('pro under concurrency: 8 parallel creates give exactly 3 × 201 and 5 × 403; a delete frees a slot', async () => {
    const t = await givenTeam('pro');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create(t, `p${i}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, results.map((r) => r.body).join('\n')).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    for (const r of results.filter((x) => x.status === 403)) expect(r.json.code).toBe('PLAN_LIMIT_REACHED');
    const listed = await api.list(t.adminSession);
    expect(ids(listed).sort()).toEqual(
      results
        .filter((r) => r.status === 201)
        .map((r) => r.json.id)
        .sort(),
    );

    expect((await api.remove(t.adminSession, ids(listed)[0] as string)).status).toBe(204);
    expect((await create(t, 'refill')).status).toBe(201);
    expectProblem(await create(t, 'over'), 403, 'PLAN_LIMIT_REACHED');
    expect(ids(await api.list(t.adminSession))).toHaveLength(3);
  });

  it('team allows exactly 10', async () => {
    const t = await givenTeam('team');
    for (let i = 0; i < 10; i++) expect((await create(t, `t${i}`)).status).toBe(201);
    expectProblem(await create(t, 'eleventh'), 403, 'PLAN_LIMIT_REACHED');
    expect(ids(await api.list(t.adminSession))).toHaveLength(10);
  });

  it('enterprise is unlimited (11 and more); a downgrade stops further creates', async () => {
    const t = await givenTeam('enterprise');
    const results = await Promise.all(Array.from({ length: 11 }, (_, i) => create(t, `e${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(11).fill(201));
    expect((await create(t, 'twelfth')).status).toBe(201);
    expect(ids(await api.list(t.adminSession))).toHaveLength(12);

    await setPlan(t.account.accountId, 'team');
    expectProblem(await create(t, 'over'), 403, 'PLAN_LIMIT_REACHED');
  });
});

describe('delete', () => {
  it('answers 204, then GET is 404; a second delete is 404', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'gone' });
    const id = created.json.id as string;
    const res = await api.remove(t.memberSession, id);
    expect(res.status).toBe(204);
    expect(res.body ?? '').toBe('');
    expectProblem(await api.get(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
    expectProblem(await api.get(t.adminSession, id), 404, 'WEBHOOK_NOT_FOUND');
    expectProblem(await api.remove(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
    expectProblem(await api.update(t.memberSession, id, { name: 'x' }), 404, 'WEBHOOK_NOT_FOUND');
    expectProblem(await api.stats(t.memberSession, id), 404, 'WEBHOOK_NOT_FOUND');
    expect(ids(await api.list(t.memberSession))).toEqual([]);
  });

  it('an admin deletes a member webhook', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'gone' });
    expect((await api.remove(t.adminSession, created.json.id)).status).toBe(204);
    expect(ids(await api.list(t.memberSession))).toEqual([]);
  });
});

describe('deleting a workflow', () => {
  it('deletes its webhooks (their URLs answer 404) and frees their plan slots; the others stay', async () => {
    const t = await givenTeam('pro');
    const doomed = await Promise.all(['a', 'b'].map((name) => api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name })));
    const kept = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'kept' });
    expect([...doomed, kept].map((r) => r.status)).toEqual([201, 201, 201]);
    await removeWorkflow(t.admin, t.adminWf.workflowId);
    for (const r of doomed) expectProblem(await api.get(t.adminSession, r.json.id), 404, 'WEBHOOK_NOT_FOUND');
    const trigger = await invoke(
      triggerHandler,
      apiEvent({
        method: 'POST',
        path: `/api/webhooks/${doomed[0]?.json.id}/trigger`,
        params: { webhookId: doomed[0]?.json.id },
        body: {},
      }),
    );
    expectProblem(trigger, 404, 'WEBHOOK_NOT_FOUND');
    expect(ids(await api.list(t.adminSession))).toEqual([kept.json.id]);
    // Pro allows 3: the two slots are free again.
    for (const name of ['c', 'd'])
      expect((await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name })).status).toBe(201);
    expectProblem(await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 'e' }), 403, 'PLAN_LIMIT_REACHED');
    // No webhook can be made for the deleted workflow.
    expectProblem(await api.create(t.adminSession, { workflowId: t.adminWf.workflowId, name: 'late' }), 404, 'WORKFLOW_NOT_FOUND');
  });
});

describe('stats', () => {
  it('of a new webhook: zeros, lastTriggeredAt null, 30 ascending UTC daily buckets ending today', async () => {
    const t = await givenTeam();
    const created = await api.create(t.memberSession, { workflowId: t.memberWf.workflowId, name: 's' });
    const todayBefore = new Date().toISOString().slice(0, 10);
    const res = await api.stats(t.memberSession, created.json.id);
    const todayAfter = new Date().toISOString().slice(0, 10);
    expect(res.status, res.body).toBe(200);
    expect(WebhookStats.parse(res.json)).toEqual(res.json);
    expect(res.json).toMatchObject({ total: 0, accepted: 0, rejected: {}, lastTriggeredAt: null });
    const daily = res.json.daily as { date: string; accepted: number; rejected: number }[];
    expect(daily).toHaveLength(30);
    expect([todayBefore, todayAfter]).toContain(daily[29]?.date);
    for (const [i, d] of daily.entries()) {
      expect(d).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), accepted: 0, rejected: 0 });
      if (i > 0) expect(Date.parse(`${d.date}T00:00:00Z`) - Date.parse(`${daily[i - 1]?.date}T00:00:00Z`)).toBe(DAY);
    }
  });
});
