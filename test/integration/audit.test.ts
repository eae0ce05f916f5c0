import { describe, expect, it } from 'vitest';
import { handler as auditHandler } from '../../functions/http/audit/list.ts';
import { handler as loginHandler } from '../../functions/http/auth/login.ts';
import { handler as logoutHandler } from '../../functions/http/auth/logout.ts';
import { handler as createKeyHandler } from '../../functions/http/keys/create.ts';
import { handler as revokeKeyHandler } from '../../functions/http/keys/revoke.ts';
import { handler as createMemberHandler } from '../../functions/http/members/create.ts';
import { handler as removeMemberHandler } from '../../functions/http/members/remove.ts';
import { handler as updateMemberHandler } from '../../functions/http/members/update.ts';
import { handler as createSecretHandler } from '../../functions/http/secrets/create.ts';
import { handler as deleteSecretHandler } from '../../functions/http/secrets/delete.ts';
import { handler as updateSecretHandler } from '../../functions/http/secrets/update.ts';
import { handler as createWebhookHandler } from '../../functions/http/webhooks/create.ts';
import { handler as deleteWebhookHandler } from '../../functions/http/webhooks/delete.ts';
import { handler as updateWebhookHandler } from '../../functions/http/webhooks/update.ts';
import { handler as createWorkflowHandler } from '../../functions/http/workflows/create.ts';
import { handler as deleteWorkflowHandler } from '../../functions/http/workflows/delete.ts';
import { handler as updateWorkflowHandler } from '../../functions/http/workflows/update.ts';
import type { AuditEntry } from '../../shared/db/entities/audit.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { freshIp } from '../support/sessions.ts';

// The account audit log over the API's handlers (the same middleware stack as the local server and
// Lambda): each change is recorded once, with who, from where and how; a refused change records
// nothing; members read their own entries only; the NDJSON export is the JSON pages' entries.

type Call = { method?: string; path: string; params?: Record<string, string>; body?: object; query?: Record<string, string> };
const as = (token: string, ip: string) => (handler: Parameters<typeof invoke>[0], c: Call) =>
  invoke(handler, apiEvent({ ...c, headers: bearer(token), sourceIp: ip }));

async function signIn(email: string, ip: string, password = PASSWORD) {
  return invoke(loginHandler, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp: ip }));
}

/** Every entry the session may read that matches `query`, through the JSON pages (small pages, so the cursor is used). */
async function readAll(token: string, query: Record<string, string> = {}): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  do {
    const res = await invoke(
      auditHandler,
      apiEvent({ path: '/api/audit', headers: bearer(token), query: { limit: '3', ...query, ...(cursor ? { cursor } : {}) } }),
    );
    expect(res.status, res.body).toBe(200);
    out.push(...res.json.items);
    cursor = res.json.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

const only = (entries: AuditEntry[], action: string, objectId?: string) => {
  const found = entries.filter((e) => e.action === action && (objectId === undefined || e.object.id === objectId));
  expect(found, `${action} ${objectId ?? ''}: ${JSON.stringify(entries.map((e) => `${e.action} ${e.object.id}`))}`).toHaveLength(1);
  return found[0] as AuditEntry;
};

describe('the audit log', () => {
  it('records each change to keys, members and sessions once, with actor, channel and address', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const login = await signIn(a.admin.email, ip);
    expect(login.status).toBe(200);
    const token = login.json.token as string;
    const call = as(token, ip);

    const key = await call(createKeyHandler, {
      method: 'POST',
      path: '/api/keys',
      body: { name: 'ci', scopes: ['WORKFLOW_READ'], validityDays: 7 },
    });
    expect(key.status).toBe(201);
    expect((await call(revokeKeyHandler, { method: 'DELETE', path: `/api/keys/${key.json.id}`, params: { id: key.json.id } })).status).toBe(
      204,
    );
    // Revoked already: nothing changes, nothing is recorded.
    await call(revokeKeyHandler, { method: 'DELETE', path: `/api/keys/${key.json.id}`, params: { id: key.json.id } });

    const email = uniqueEmail('new');
    const added = await call(createMemberHandler, {
      method: 'POST',
      path: '/api/members',
      body: { email, password: PASSWORD, role: 'member' },
    });
    expect(added.status, added.body).toBe(201);
    const id = added.json.id as string;
    const update = (body: object) => call(updateMemberHandler, { method: 'PUT', path: `/api/members/${id}`, params: { id }, body });
    expect((await update({ role: 'admin' })).status).toBe(200);
    expect((await update({ disabled: true })).status).toBe(200);
    expect((await update({ disabled: false, restoreKeys: true })).status).toBe(200);
    expect((await call(removeMemberHandler, { method: 'DELETE', path: `/api/members/${id}`, params: { id } })).status).toBe(204);

    const wrongIp = freshIp();
    expect((await signIn(a.member.email, wrongIp, 'not the password')).status).toBe(401);
    expect((await call(logoutHandler, { method: 'POST', path: '/api/auth/logout' })).status).toBe(204);

    const token2 = (await signIn(a.admin.email, ip)).json.token as string;
    const log = await readAll(token2);
    const byAdmin = { kind: 'user', userId: a.admin.userId };
    const signedIn = log.filter((e) => e.action === 'session.signed_in');
    expect(signedIn).toHaveLength(2);
    expect(signedIn[1]).toMatchObject({ actor: byAdmin, channel: 'api', ip, object: { type: 'member', id: a.admin.userId } });
    expect(only(log, 'key.created', key.json.id)).toMatchObject({
      actor: byAdmin,
      channel: 'api',
      ip,
      object: { type: 'key', id: key.json.id, name: 'ci' },
      details: { scopes: ['WORKFLOW_READ'], validityDays: 7 },
    });
    expect(only(log, 'key.revoked', key.json.id)).toMatchObject({ actor: byAdmin, ip });
    expect(only(log, 'member.added', id)).toMatchObject({ actor: byAdmin, ip, object: { name: email }, details: { role: 'member' } });
    expect(only(log, 'member.updated', id).details).toEqual({ roleFrom: 'member', roleTo: 'admin' });
    expect(only(log, 'member.disabled', id)).toMatchObject({ ip });
    expect(only(log, 'member.enabled', id).details).toEqual({ restoreKeys: true });
    expect(only(log, 'member.removed', id).details).toEqual({ role: 'admin' });
    expect(only(log, 'session.sign_in_failed', a.member.userId)).toMatchObject({
      actor: { kind: 'anonymous', userId: a.member.userId, email: a.member.email },
      ip: wrongIp,
      details: { reason: 'password' },
    });
    expect(only(log, 'session.signed_out')).toMatchObject({ actor: byAdmin, ip });
    // Newest first, and no entry holds a secret: the password and the key's token never appear.
    expect(log.map((e) => e.at)).toEqual([...log.map((e) => e.at)].sort((x, y) => y - x));
    expect(JSON.stringify(log)).not.toContain(PASSWORD);
    expect(JSON.stringify(log)).not.toContain(key.json.token);
  });

  it('records workflows (with their version), webhooks and secrets, never a secret value', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const token = (await signIn(a.admin.email, ip)).json.token as string;
    const call = as(token, ip);
    const definition = { steps: [{ id: 'greet', type: 'set', values: { greeting: 'hello' } }] };
    const wf = await call(createWorkflowHandler, { method: 'POST', path: '/api/workflows', body: { name: 'Deploy', definition } });
    expect(wf.status, wf.body).toBe(201);
    const wfId = wf.json.id as string;
    const wfUpdate = await call(updateWorkflowHandler, {
      method: 'PUT',
      path: `/api/workflows/${wfId}`,
      params: { id: wfId },
      body: { description: 'ships it' },
    });
    expect(wfUpdate.status, wfUpdate.body).toBe(200);

    const wh = await call(createWebhookHandler, {
      method: 'POST',
      path: '/api/webhooks',
      body: { workflowId: wfId, name: 'Stripe events', secretKey: 'whsec_0123456789abcdefghijklmnopqrstuv' },
    });
    expect(wh.status, wh.body).toBe(201);
    const whId = wh.json.id as string;
    const whUpdate = (body: object) =>
      call(updateWebhookHandler, { method: 'PUT', path: `/api/webhooks/${whId}`, params: { id: whId }, body });
    expect((await whUpdate({ enabled: false })).status).toBe(200);
    expect((await whUpdate({ name: 'Stripe' })).status).toBe(200);
    expect((await call(deleteWebhookHandler, { method: 'DELETE', path: `/api/webhooks/${whId}`, params: { id: whId } })).status).toBe(204);

    const secretValue = 'sk_live_do_not_log_me_123';
    const secret = { method: 'POST', path: '/api/secrets', body: { name: 'STRIPE_KEY', value: secretValue } };
    expect((await call(createSecretHandler, secret)).status).toBe(201);
    const params = { name: 'STRIPE_KEY' };
    const put = await call(updateSecretHandler, {
      method: 'PUT',
      path: '/api/secrets/STRIPE_KEY',
      params,
      body: { value: `${secretValue}2` },
    });
    expect(put.status, put.body).toBe(200);
    expect((await call(deleteSecretHandler, { method: 'DELETE', path: '/api/secrets/STRIPE_KEY', params })).status).toBe(204);
    expect((await call(deleteWorkflowHandler, { method: 'DELETE', path: `/api/workflows/${wfId}`, params: { id: wfId } })).status).toBe(
      204,
    );

    const log = await readAll(token);
    expect(only(log, 'workflow.created', wfId).object).toEqual({ type: 'workflow', id: wfId, name: 'Deploy', version: 1 });
    expect(only(log, 'workflow.updated', wfId)).toMatchObject({ object: { version: 2 }, details: { changed: ['description'] }, ip });
    expect(only(log, 'workflow.deleted', wfId).object.version).toBe(2);
    expect(only(log, 'webhook.created', whId)).toMatchObject({ object: { name: 'Stripe events' }, details: { authMode: 'hmac' } });
    only(log, 'webhook.disabled', whId);
    expect(only(log, 'webhook.updated', whId).details).toEqual({ changed: ['name'] });
    only(log, 'webhook.deleted', whId);
    only(log, 'secret.created', 'STRIPE_KEY');
    expect(only(log, 'secret.updated', 'STRIPE_KEY').details).toEqual({ changed: ['value'] });
    only(log, 'secret.deleted', 'STRIPE_KEY');
    expect(JSON.stringify(log)).not.toContain(secretValue);
    expect(JSON.stringify(log)).not.toContain('whsec_0123456789');

    // Filters: by action, by object, by time (a range that ends before the first change holds none of them).
    expect((await readAll(token, { action: 'webhook.deleted' })).map((e) => e.object.id)).toEqual([whId]);
    const ofWorkflow = await readAll(token, { objectType: 'workflow', objectId: wfId });
    expect(ofWorkflow.map((e) => e.action)).toEqual(['workflow.deleted', 'workflow.updated', 'workflow.created']);
    const first = ofWorkflow[2] as AuditEntry;
    const before = await readAll(token, { to: new Date(first.at - 1).toISOString() });
    expect(before.some((e) => e.object.id === wfId || e.object.id === whId)).toBe(false);
    const since = await readAll(token, { from: new Date(first.at).toISOString(), action: 'workflow.created' });
    expect(since.map((e) => e.object.id)).toEqual([wfId]);
  });

  it('records nothing for a refused change', async () => {
    const a = await givenAccount();
    const other = await givenAccount();
    const ip = freshIp();
    const token = (await signIn(a.admin.email, ip)).json.token as string;
    const call = as(token, ip);
    const before = await readAll(token);
    // Validation (400), another account's key (404), the last admin (409), a duplicate secret (409).
    expect(
      (await call(createKeyHandler, { method: 'POST', path: '/api/keys', body: { name: 'x', scopes: [], validityDays: 7 } })).status,
    ).toBe(400);
    const theirs = other.adminKey.id;
    expect((await call(revokeKeyHandler, { method: 'DELETE', path: `/api/keys/${theirs}`, params: { id: theirs } })).status).toBe(404);
    const self = a.admin.userId;
    const demote = await call(updateMemberHandler, {
      method: 'PUT',
      path: `/api/members/${self}`,
      params: { id: self },
      body: { role: 'member' },
    });
    expect(demote.status).toBe(409);
    expect((await call(createSecretHandler, { method: 'POST', path: '/api/secrets', body: { name: 'DUP', value: 'v' } })).status).toBe(201);
    expect((await call(createSecretHandler, { method: 'POST', path: '/api/secrets', body: { name: 'DUP', value: 'w' } })).status).toBe(409);
    const after = await readAll(token);
    expect(after.length - before.length).toBe(1);
    expect(after[0]).toMatchObject({ action: 'secret.created', object: { id: 'DUP' } });
    // The other account's log has nothing of this one's.
    const theirToken = (await signIn(other.admin.email, freshIp())).json.token as string;
    expect((await readAll(theirToken)).every((e) => e.accountId === other.account.accountId)).toBe(true);
  });

  it('gives concurrent changes an entry each', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const token = (await signIn(a.admin.email, ip)).json.token as string;
    const call = as(token, ip);
    const names = Array.from({ length: 8 }, (_, i) => `CONCURRENT_${i}`);
    const results = await Promise.all(
      names.map((name) => call(createSecretHandler, { method: 'POST', path: '/api/secrets', body: { name, value: 'v' } })),
    );
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201));
    // And concurrent revocations of one key: one wins, one entry.
    const key = await call(createKeyHandler, {
      method: 'POST',
      path: '/api/keys',
      body: { name: 'race', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    });
    await Promise.all(
      Array.from({ length: 4 }, () =>
        call(revokeKeyHandler, { method: 'DELETE', path: `/api/keys/${key.json.id}`, params: { id: key.json.id } }),
      ),
    );
    const log = await readAll(token, { action: 'secret.created' });
    expect(log.map((e) => e.object.id).sort()).toEqual([...names].sort());
    expect(new Set(log.map((e) => e.auditId)).size).toBe(names.length);
    expect(await readAll(token, { action: 'key.revoked', objectId: key.json.id })).toHaveLength(1);
  });

  it('lets a member read only their own entries', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const member = (await signIn(a.member.email, ip)).json.token as string;
    await as(member, ip)(createKeyHandler, {
      method: 'POST',
      path: '/api/keys',
      body: { name: 'mine', scopes: ['WORKFLOW_READ'], validityDays: 7 },
    });
    const admin = (await signIn(a.admin.email, freshIp())).json.token as string;
    const own = await readAll(member);
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((e) => e.actor.userId === a.member.userId)).toBe(true);
    expect(own.some((e) => e.action === 'key.created' && e.object.name === 'mine')).toBe(true);
    expect((await readAll(member, { actor: a.member.userId })).length).toBe(own.length);
    const res = await invoke(auditHandler, apiEvent({ path: '/api/audit', headers: bearer(member), query: { actor: a.admin.userId } }));
    expect(res.status).toBe(403);
    expect(res.json.code).toBe('AUDIT_OWN_ONLY');
    // The admin reads everyone's, and may ask for one member's.
    const all = await readAll(admin);
    expect(all.some((e) => e.actor.userId === a.admin.userId) && all.some((e) => e.actor.userId === a.member.userId)).toBe(true);
    expect((await readAll(admin, { actor: a.member.userId })).map((e) => e.auditId)).toEqual(own.map((e) => e.auditId));
  });

  it('exports the same entries as NDJSON, one JSON a line', async () => {
    const a = await givenAccount();
    const ip = freshIp();
    const token = (await signIn(a.admin.email, ip)).json.token as string;
    const call = as(token, ip);
    for (let i = 0; i < 5; i++)
      await call(createSecretHandler, { method: 'POST', path: '/api/secrets', body: { name: `EXPORT_${i}`, value: 'v' } });
    const pages = await readAll(token);
    const res = await invoke(auditHandler, apiEvent({ path: '/api/audit', headers: { ...bearer(token), accept: 'application/x-ndjson' } }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    const lines = (res.body ?? '').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(pages);
    const filtered = await invoke(
      auditHandler,
      apiEvent({ path: '/api/audit', headers: { ...bearer(token), accept: 'application/x-ndjson' }, query: { action: 'secret.created' } }),
    );
    expect(
      filtered.body
        ?.trim()
        .split('\n')
        .map((l) => JSON.parse(l).object.id),
    ).toEqual(['EXPORT_4', 'EXPORT_3', 'EXPORT_2', 'EXPORT_1', 'EXPORT_0']);
  });
});
