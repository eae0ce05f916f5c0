import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { useOwnQueues } from '../support/engine.ts';
import { handler as login } from '../../functions/http/auth/login.ts';
import { handler as me } from '../../functions/http/auth/me.ts';
import { handler as listKeys } from '../../functions/http/keys/list.ts';
import { handler as createMember } from '../../functions/http/members/create.ts';
import { handler as listMembers } from '../../functions/http/members/list.ts';
import { handler as removeMember } from '../../functions/http/members/remove.ts';
import { handler as updateMember } from '../../functions/http/members/update.ts';
import { handler as v1Me } from '../../functions/http/v1/me.ts';
import { db, tableName } from '../../shared/clients.ts';
import { revokeApiKey, setKeySuspended } from '../../shared/db/entities/api-key.ts';
import { adminsKey } from '../../shared/db/entities/user.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { caches } from '../../shared/domain/records.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { handler as triggerHandler } from '../../functions/http/webhooks/trigger.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';

const ip = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
const loginAs = (email: string, password = PASSWORD) =>
  invoke(login, apiEvent({ method: 'POST', path: '/api/auth/login', body: { email, password }, sourceIp: ip() }));
const session = async (email: string) => (await loginAs(email)).json.token as string;
const whoAmI = (token: string) => invoke(me, apiEvent({ path: '/api/auth/me', headers: bearer(token), sourceIp: ip() }));
const keyCall = (token: string) => invoke(v1Me, apiEvent({ path: '/api/v1/me', headers: bearer(token), sourceIp: ip() }));
const update = (token: string, id: string, body: object) =>
  invoke(
    updateMember,
    apiEvent({ method: 'PUT', path: `/api/members/${id}`, params: { id }, headers: bearer(token), body, sourceIp: ip() }),
  );
const remove = (token: string, id: string) =>
  invoke(removeMember, apiEvent({ method: 'DELETE', path: `/api/members/${id}`, params: { id }, headers: bearer(token), sourceIp: ip() }));

describe('disabling a member', () => {
  it('cuts their live session and live (cached) key at once, refuses their login; enabling with restoreKeys brings back the key, never the session', async () => {
    const { admin, member, memberKey } = await givenAccount();
    const adminToken = await session(admin.email);
    const memberToken = await session(member.email);
    expect((await whoAmI(memberToken)).status).toBe(200);
    expect((await keyCall(memberKey.token)).status).toBe(200); // the key record is now cached in this instance

    const disabled = await update(adminToken, member.userId, { disabled: true });
    expect(disabled.status).toBe(200);
    expect(disabled.json).toMatchObject({ id: member.userId, role: 'member', disabled: true });

    const cut = await whoAmI(memberToken);
    expect(cut.status).toBe(401);
    expect(cut.json.code).toBe('INVALID_SESSION');
    const keyCut = await keyCall(memberKey.token);
    expect(keyCut.status).toBe(401);
    expect(keyCut.json.code).toBe('INVALID_API_KEY');
    const refused = await loginAs(member.email);
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('MEMBER_DISABLED');
    // A wrong password still reads as a wrong password: the state is told only to the right one.
    expect((await loginAs(member.email, 'wrong password!!')).json.code).toBe('INVALID_CREDENTIALS');

    const keys = await invoke(listKeys, apiEvent({ path: '/api/keys', query: { all: 'true' }, headers: bearer(adminToken) }));
    expect(keys.json.items.find((k: { id: string }) => k.id === memberKey.id).status).toBe('suspended');
    const members = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(adminToken) }));
    expect(members.json.items.find((u: { id: string }) => u.id === member.userId).disabled).toBe(true);

    expect((await update(adminToken, member.userId, { disabled: false, restoreKeys: true })).json.disabled).toBe(false);
    expect((await whoAmI(memberToken)).status).toBe(401);
    expect((await keyCall(memberKey.token)).status).toBe(200);
    expect((await whoAmI(await session(member.email))).status).toBe(200);
  });

  it('refuses a key suspended or revoked by another instance although this one still has it cached', async () => {
    const { adminKey, memberKey } = await givenAccount();
    expect((await keyCall(adminKey.token)).status).toBe(200);
    expect((await keyCall(memberKey.token)).status).toBe(200);
    // Written straight to the table: this instance's cache is not told, as another instance's would not be.
    await setKeySuspended(memberKey.id, true);
    await revokeApiKey(adminKey.id, Date.now());
    expect(caches.keys.peek(memberKey.id)).toBeDefined();
    expect((await keyCall(memberKey.token)).json.code).toBe('INVALID_API_KEY');
    expect((await keyCall(adminKey.token)).json.code).toBe('INVALID_API_KEY');
  });
});

describe('a disabled member’s key bound to a webhook', () => {
  beforeAll(() => useOwnQueues());
  it('is refused by the trigger at once although the trigger has the key cached, and works again after a restore', async () => {
    const { account, admin, member, memberKey } = await givenAccount();
    const actor = { kind: 'session', accountId: account.accountId, userId: member.userId, role: 'member', sessionId: '' } as const;
    const workflow = await createWorkflow(actor, {
      name: 'bound',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: { a: 1 } }] }),
      recovery: false,
      editors: [],
    });
    const webhook = await createWebhook(
      actor,
      CreateWebhookBody.parse({ workflowId: workflow.workflowId, name: 'bound', apiKeyId: memberKey.id }),
    );
    const trigger = () =>
      invoke(
        triggerHandler,
        apiEvent({ method: 'POST', params: { webhookId: webhook.webhookId }, headers: bearer(memberKey.token), body: {}, sourceIp: ip() }),
      );
    expect((await trigger()).status).toBe(200);
    const adminToken = await session(admin.email);
    expect((await update(adminToken, member.userId, { disabled: true })).status).toBe(200);
    expect(caches.keys.peek(memberKey.id)).toBeDefined();
    expectProblem(await trigger(), 401, 'INVALID_API_KEY');
    expect((await update(adminToken, member.userId, { disabled: false })).status).toBe(200);
    expectProblem(await trigger(), 401, 'INVALID_API_KEY');
    expect((await update(adminToken, member.userId, { disabled: false, restoreKeys: true })).status).toBe(200);
    expect((await trigger()).status).toBe(200);
  });
});

describe('removing a member', () => {
  it('cuts their live session and key at once, revokes their keys and frees their email', async () => {
    const { admin, member, memberKey } = await givenAccount();
    const adminToken = await session(admin.email);
    const memberToken = await session(member.email);
    expect((await keyCall(memberKey.token)).status).toBe(200);

    expect((await remove(adminToken, member.userId)).status).toBe(204);
    expect((await whoAmI(memberToken)).status).toBe(401);
    expect((await keyCall(memberKey.token)).status).toBe(401);
    expect((await loginAs(member.email)).status).toBe(401);
    const again = await remove(adminToken, member.userId);
    expect(again.status).toBe(404);
    expect(again.json.code).toBe('MEMBER_NOT_FOUND');

    const keys = await invoke(listKeys, apiEvent({ path: '/api/keys', query: { all: 'true' }, headers: bearer(adminToken) }));
    expect(keys.json.items.find((k: { id: string }) => k.id === memberKey.id).status).toBe('revoked');
    const members = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(adminToken) }));
    expect(members.json.items.map((u: { id: string }) => u.id)).toEqual([admin.userId]);
    const readded = await invoke(
      createMember,
      apiEvent({ method: 'POST', path: '/api/members', headers: bearer(adminToken), body: { email: member.email, password: PASSWORD } }),
    );
    expect(readded.status).toBe(201);
  });
});

describe('roles', () => {
  it('a promotion or demotion applies to the live session at once', async () => {
    const { admin, member } = await givenAccount();
    const adminToken = await session(admin.email);
    const memberToken = await session(member.email);
    const asMember = () =>
      invoke(
        createMember,
        apiEvent({
          method: 'POST',
          path: '/api/members',
          headers: bearer(memberToken),
          body: { email: uniqueEmail(), password: PASSWORD },
        }),
      );
    expect((await asMember()).status).toBe(403);
    expect((await update(adminToken, member.userId, { role: 'admin' })).json.role).toBe('admin');
    expect((await asMember()).status).toBe(201);
    expect((await update(adminToken, member.userId, { role: 'member' })).json.role).toBe('member');
    expect((await asMember()).status).toBe(403);
  });
});

describe('the last admin', () => {
  it('cannot be demoted, disabled or removed (409 LAST_ADMIN), and nothing changes', async () => {
    const { admin } = await givenAccount();
    const token = await session(admin.email);
    for (const res of [
      await update(token, admin.userId, { role: 'member' }),
      await update(token, admin.userId, { disabled: true }),
      await remove(token, admin.userId),
    ]) {
      expect(res.status).toBe(409);
      expect(res.json.code).toBe('LAST_ADMIN');
    }
    expect((await whoAmI(token)).json.user.role).toBe('admin');
  });

  it('two admins demoting each other at once leave exactly one admin', async () => {
    for (let round = 0; round < 3; round++) {
      const { admin, member } = await givenAccount();
      const a = await session(admin.email);
      const promote = await update(a, member.userId, { role: 'admin' });
      expect(promote.status).toBe(200);
      const b = await session(member.email);
      const [x, y] = await Promise.all([update(a, member.userId, { role: 'member' }), update(b, admin.userId, { role: 'member' })]);
      // One wins. The other is refused: 409 LAST_ADMIN when both checks ran before either change, or 403
      // ADMIN_ONLY when its sender was already demoted as its request was authenticated (a busy machine
      // can let one request finish before the other starts).
      const refused = [x, y].find((r) => r.status !== 200);
      expect([x.status, y.status].filter((s) => s === 200)).toHaveLength(1);
      expect([`${refused?.status} ${refused?.json.code}`]).toEqual([expect.stringMatching(/^(409 LAST_ADMIN|403 ADMIN_ONLY)$/)]);
      const list = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(x.status === 200 ? a : b) }));
      expect(list.json.items.filter((u: { role: string }) => u.role === 'admin')).toHaveLength(1);
    }
  });

  it('holds for an account created before the admin set existed', async () => {
    const { account, admin, member } = await givenAccount();
    await db().send(new DeleteCommand({ TableName: tableName(), Key: adminsKey(account.accountId) }));
    const token = await session(admin.email);
    expect((await update(token, admin.userId, { role: 'member' })).json.code).toBe('LAST_ADMIN');
    expect((await update(token, member.userId, { role: 'admin' })).status).toBe(200);
    const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: adminsKey(account.accountId) }));
    expect([...(Item?.admins ?? [])].sort()).toEqual([admin.userId, member.userId].sort());
    expect((await update(token, admin.userId, { role: 'member' })).status).toBe(200);
  });
});

describe("a member's Slack user id", () => {
  const create = (token: string, body: object) =>
    invoke(createMember, apiEvent({ method: 'POST', path: '/api/members', headers: bearer(token), body, sourceIp: ip() }));
  const slackIds = async (token: string) => {
    const list = await invoke(listMembers, apiEvent({ path: '/api/members', headers: bearer(token) }));
    return (list.json.items as { id: string; slackUserId?: string }[]).filter((u) => u.slackUserId).map((u) => [u.id, u.slackUserId]);
  };

  it('is one member’s in the account: another member’s id is 409 SLACK_USER_TAKEN on update and create; freed by null and by removal', async () => {
    const { admin, member } = await givenAccount();
    const token = await session(admin.email);
    expect((await update(token, member.userId, { slackUserId: 'U0TAKEN1' })).json.slackUserId).toBe('U0TAKEN1');
    // The holder may send it again.
    expect((await update(token, member.userId, { slackUserId: 'U0TAKEN1' })).status).toBe(200);
    expectProblem(await update(token, admin.userId, { slackUserId: 'U0TAKEN1' }), 409, 'SLACK_USER_TAKEN');
    expectProblem(
      await create(token, { email: uniqueEmail('slack'), password: PASSWORD, slackUserId: 'U0TAKEN1' }),
      409,
      'SLACK_USER_TAKEN',
    );
    expect(await slackIds(token)).toEqual([[member.userId, 'U0TAKEN1']]);
    // Another account's member may hold the same id.
    const other = await givenAccount();
    expect((await update(await session(other.admin.email), other.member.userId, { slackUserId: 'U0TAKEN1' })).status).toBe(200);

    // Changing it frees the old id; null frees it; removing the member frees it.
    expect((await update(token, member.userId, { slackUserId: 'U0TAKEN2' })).status).toBe(200);
    expect((await update(token, admin.userId, { slackUserId: 'U0TAKEN1' })).status).toBe(200);
    expectProblem(await update(token, admin.userId, { slackUserId: 'U0TAKEN2' }), 409, 'SLACK_USER_TAKEN');
    expect((await update(token, member.userId, { slackUserId: null })).status).toBe(200);
    expect((await update(token, admin.userId, { slackUserId: 'U0TAKEN2' })).status).toBe(200);
    const created = await create(token, { email: uniqueEmail('slack'), password: PASSWORD, slackUserId: 'U0TAKEN1' });
    expect(created.status, created.body).toBe(201);
    expect(created.json.slackUserId).toBe('U0TAKEN1');
    expect((await remove(token, created.json.id)).status).toBe(204);
    expect((await update(token, member.userId, { slackUserId: 'U0TAKEN1' })).status).toBe(200);
    expect((await slackIds(token)).sort()).toEqual(
      [
        [admin.userId, 'U0TAKEN2'],
        [member.userId, 'U0TAKEN1'],
      ].sort(),
    );
  });

  it('parallel requests for one id: exactly one member records it, the others get 409', async () => {
    for (let round = 0; round < 3; round++) {
      const { account, admin, member } = await givenAccount();
      const token = await session(admin.email);
      const spares = await Promise.all([0, 1, 2].map(() => createUser(account.accountId, uniqueEmail('spare'), PASSWORD, 'member')));
      const id = `U0RACE${round}`;
      const answers = await Promise.all([
        ...[admin.userId, member.userId, ...spares.map((u) => u.userId)].map((userId) => update(token, userId, { slackUserId: id })),
        create(token, { email: uniqueEmail('racer'), password: PASSWORD, slackUserId: id }),
      ]);
      const won = answers.filter((r) => r.status === 200 || r.status === 201);
      expect(won, JSON.stringify(answers.map((r) => [r.status, r.json?.code]))).toHaveLength(1);
      for (const r of answers.filter((r) => !won.includes(r))) expectProblem(r, 409, 'SLACK_USER_TAKEN');
      expect(await slackIds(token)).toEqual([[won[0]?.json.id, id]]);
    }
  });
});

describe('member routes refuse', () => {
  it('members, other accounts, unknown ids and bad bodies, changing nothing', async () => {
    const { admin, member } = await givenAccount();
    const other = await givenAccount();
    const adminToken = await session(admin.email);
    const memberToken = await session(member.email);
    expect((await update(memberToken, admin.userId, { disabled: true })).json.code).toBe('ADMIN_ONLY');
    expect((await remove(memberToken, admin.userId)).json.code).toBe('ADMIN_ONLY');
    for (const id of [other.member.userId, other.admin.userId, 'usr_nope', 'x'.repeat(64)]) {
      expect((await update(adminToken, id, { disabled: true })).json.code, id).toBe('MEMBER_NOT_FOUND');
      expect((await remove(adminToken, id)).json.code, id).toBe('MEMBER_NOT_FOUND');
    }
    for (const body of [{}, { role: 'owner' }, { disabled: 'yes' }, { role: 'member', extra: 1 }]) {
      const res = await update(adminToken, member.userId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('VALIDATION_FAILED');
    }
    expect((await whoAmI(await session(other.member.email))).status).toBe(200);
    expect((await whoAmI(memberToken)).json.user.role).toBe('member');
  });
});
