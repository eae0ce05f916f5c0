import { beforeAll, describe, expect, it } from 'vitest';
import { handler as auditExport } from '../../functions/http/audit/export.ts';
import { handler as auditList } from '../../functions/http/audit/list.ts';
import { handler as createSecret } from '../../functions/http/secrets/create.ts';
import { handler as versionHandler } from '../../functions/http/workflows/version.ts';
import { handler as versionsHandler } from '../../functions/http/workflows/versions.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { updateMember } from '../../shared/domain/members.ts';
import { createWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { adminSession, givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

// The audit log and a workflow's versions read by a program with an API key (AUDIT_READ, WORKFLOW_READ)
// beside the console session, through the handlers' whole stack on the emulators: a key reads what its
// owner may, is metered as on v1, and a key without the scope, or another account's, reads nothing.

let a: Awaited<ReturnType<typeof givenAccount>>;
let other: Awaited<ReturnType<typeof givenAccount>>;
let adminSessionToken: string;
let workflowId: string;
beforeAll(async () => {
  [a, other] = await Promise.all([givenAccount(), givenAccount()]);
  adminSessionToken = await sessionOf(a.admin.email);
  for (const name of ['KEY_READ_1', 'KEY_READ_2'])
    await invoke(
      createSecret,
      apiEvent({
        method: 'POST',
        path: '/api/secrets',
        headers: bearer(adminSessionToken),
        body: { name, value: 'v' },
        sourceIp: freshIp(),
      }),
    );
  const actor = { accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' as const };
  const steps = (greeting: string) => WorkflowDefinition.parse({ steps: [{ id: 'hello', type: 'set', values: { greeting } }] });
  const w = await createWorkflow(actor, { name: 'Versioned', definition: steps('one'), recovery: false, editors: [] }, 1_000);
  await updateWorkflow(actor, w.workflowId, { definition: steps('two') }, 2_000);
  workflowId = w.workflowId;
}, 60_000);

const audit = (headers: Record<string, string>, query: Record<string, string> = {}) =>
  invoke(auditList, apiEvent({ path: '/api/audit', headers, query, sourceIp: freshIp() }));
const exported = (headers: Record<string, string>, query: Record<string, string> = {}) =>
  invoke(auditExport, apiEvent({ path: '/api/audit/export', headers, query, sourceIp: freshIp() }));
const lines = (body = '') =>
  body
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('the audit log with an AUDIT_READ key', () => {
  it("reads what the key's owner reads: an admin's key every entry, as the admin's session does, and is metered", async () => {
    const bySession = await audit(bearer(adminSessionToken), { limit: '100' });
    const byKey = await audit(bearer(a.adminKey.token), { limit: '100' });
    expect(byKey.status, byKey.body).toBe(200);
    expect(byKey.json.items.length).toBeGreaterThan(2);
    expect(byKey.json.items).toEqual(bySession.json.items);
    expect(byKey.json.items.some((e: { actor: { userId?: string } }) => e.actor.userId === a.member.userId)).toBe(true);
    // Metered like every key call: the account's budget in the headers.
    expect(byKey.headers['x-ratelimit-limit']).toEqual(expect.any(String));
    expect(bySession.headers['x-ratelimit-limit']).toBeUndefined();
    // X-API-Key works as on v1.
    expect((await audit({ 'x-api-key': a.adminKey.token }, { limit: '100' })).json.items).toEqual(bySession.json.items);
  });

  it("a member's key reads the member's own entries only, and follows the owner's role as it is now", async () => {
    const own = await audit(bearer(a.memberKey.token), { limit: '100' });
    expect(own.status).toBe(200);
    expect(own.json.items.length).toBeGreaterThan(0);
    expect(own.json.items.every((e: { actor: { userId?: string } }) => e.actor.userId === a.member.userId)).toBe(true);
    expectProblem(await audit(bearer(a.memberKey.token), { actor: a.admin.userId }), 403, 'AUDIT_OWN_ONLY');
    expectProblem(await exported(bearer(a.memberKey.token), { actor: a.admin.userId }), 403, 'AUDIT_OWN_ONLY');
    // Promoted to admin, the same key reads the account's entries.
    const b = await givenAccount();
    await updateMember(adminSession(b), b.member.userId, { role: 'admin' });
    const promoted = await audit(bearer(b.memberKey.token), { actor: b.admin.userId });
    expect(promoted.status, promoted.body).toBe(200);
    expect(promoted.json.items.length).toBeGreaterThan(0);
  });

  it('refuses a key without the scope (403), a session-less request (401) and an invalid key (401), reading nothing', async () => {
    const readOnly = await createKey(
      { accountId: a.account.accountId, userId: a.admin.userId },
      { name: 'no audit', scopes: ['WORKFLOW_READ'], validityDays: 1 },
    );
    const refused = await audit(bearer(readOnly.token));
    expectProblem(refused, 403, 'INSUFFICIENT_SCOPE');
    expect(refused.body).not.toContain('auditId');
    expectProblem(await exported(bearer(readOnly.token)), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await audit({}), 401, 'UNAUTHORIZED');
    expectProblem(await audit(bearer(`${a.adminKey.token.slice(0, -1)}x`)), 401, 'INVALID_API_KEY');
  });

  it("never reads another account's entries", async () => {
    const theirs = await audit(bearer(other.adminKey.token), { limit: '100' });
    expect(theirs.status).toBe(200);
    expect(theirs.json.items.every((e: { accountId: string }) => e.accountId === other.account.accountId)).toBe(true);
    expect(JSON.stringify(theirs.json)).not.toContain(a.account.accountId);
  });
});

describe('GET /api/audit/export', () => {
  it("answers NDJSON: the JSON pages' entries, by session and by key alike, and GET /api/audit with Accept still does", async () => {
    const page = (await audit(bearer(adminSessionToken), { limit: '100' })).json.items;
    for (const headers of [bearer(adminSessionToken), bearer(a.adminKey.token)]) {
      const res = await exported(headers);
      expect(res.status, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(lines(res.body)).toEqual(page);
    }
    const filtered = await exported(bearer(a.adminKey.token), { action: 'secret.created' });
    expect(lines(filtered.body).map((e) => e.object.id)).toEqual(['KEY_READ_2', 'KEY_READ_1']);
    // Existing callers of the Accept negotiation get the same answer.
    const legacy = await audit({ ...bearer(a.adminKey.token), accept: 'application/x-ndjson' }, { action: 'secret.created' });
    expect(legacy.headers['content-type']).toBe('application/x-ndjson');
    expect(legacy.body).toBe(filtered.body);
  });

  it('refuses bad filters with 400 at their field and ignores no parameter silently', async () => {
    const res = await exported(bearer(a.adminKey.token), { from: '2026-02-30' });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.json.errors[0].path).toBe('from');
    const backwards = await exported(bearer(a.adminKey.token), { from: '2026-02-02', to: '2026-02-01' });
    expectProblem(backwards, 400, 'VALIDATION_FAILED');
  });
});

describe("a workflow's versions with a WORKFLOW_READ key", () => {
  const list = (token: string, id = workflowId) =>
    invoke(
      versionsHandler,
      apiEvent({ path: `/api/workflows/${id}/versions`, headers: bearer(token), params: { id }, sourceIp: freshIp() }),
    );
  const one = (token: string, version: string, id = workflowId) =>
    invoke(
      versionHandler,
      apiEvent({ path: `/api/workflows/${id}/versions/${version}`, headers: bearer(token), params: { id, version }, sourceIp: freshIp() }),
    );

  it('lists and reads them as a session does', async () => {
    const byKey = await list(a.memberKey.token);
    expect(byKey.status, byKey.body).toBe(200);
    expect(byKey.json.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(byKey.json).toEqual((await list(adminSessionToken)).json);
    const v1 = await one(a.memberKey.token, '1');
    expect(v1.status).toBe(200);
    expect(v1.json).toMatchObject({ version: 1, createdAt: 1_000, createdBy: a.admin.userId });
    expect(v1.json.definition.steps[0].values).toEqual({ greeting: 'one' });
    expectProblem(await one(a.memberKey.token, '3'), 404, 'WORKFLOW_VERSION_NOT_FOUND');
    expectProblem(await one(a.memberKey.token, 'abc'), 404, 'WORKFLOW_VERSION_NOT_FOUND');
  });

  it("refuses a key without WORKFLOW_READ, and answers another account's workflow as unknown", async () => {
    const auditOnly = await createKey(
      { accountId: a.account.accountId, userId: a.admin.userId },
      { name: 'audit only', scopes: ['AUDIT_READ'], validityDays: 1 },
    );
    expectProblem(await list(auditOnly.token), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await one(auditOnly.token, '1'), 403, 'INSUFFICIENT_SCOPE');
    expectProblem(await list(other.adminKey.token), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await one(other.adminKey.token, '1'), 404, 'WORKFLOW_NOT_FOUND');
  });
});
