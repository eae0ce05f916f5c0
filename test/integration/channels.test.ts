import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/channels/create.ts';
import { handler as deleteHandler } from '../../functions/http/channels/delete.ts';
import { handler as getHandler } from '../../functions/http/channels/get.ts';
import { handler as listHandler } from '../../functions/http/channels/list.ts';
import { handler as testHandler } from '../../functions/http/channels/test.ts';
import { handler as updateHandler } from '../../functions/http/channels/update.ts';
import { db, tableName } from '../../shared/clients.ts';
import { resetConfig } from '../../shared/config.ts';
import { CHANNEL_TYPES, type ChannelType } from '../../shared/db/channel-types.ts';
import { getChannel } from '../../shared/db/entities/channel.ts';
import { channelKinds } from '../../shared/channels/index.ts';
import { openChannel } from '../../shared/domain/channels.ts';
import { startChatListener } from '../support/chat-listener.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

// Approval channels (docs/approvals-and-channels.md): per account, admin-only writes, write-only secrets.

let chat: Awaited<ReturnType<typeof startChatListener>>;
beforeAll(async () => {
  chat = await startChatListener();
  Object.assign(process.env, { SLACK_API_URL: chat.slackApi, HTTP_STEP_ALLOWLIST: '127.0.0.1/32' });
  resetConfig();
});
afterAll(() => chat.stop());

const TOKEN = 'xoxb-1111-2222-secrettokenvalue';
const SIGNING = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6';
const slackBody = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'slack',
  name,
  botToken: TOKEN,
  signingSecret: SIGNING,
  ...extra,
});

const create = (s: string, body: unknown) =>
  invoke(createHandler, apiEvent({ method: 'POST', path: '/api/channels', headers: bearer(s), body: body as object }));
const list = (s: string) => invoke(listHandler, apiEvent({ path: '/api/channels', headers: bearer(s) }));
const get = (s: string, id: string) =>
  invoke(getHandler, apiEvent({ path: `/api/channels/${id}`, headers: bearer(s), params: { channelId: id } }));
const update = (s: string, id: string, body: unknown) =>
  invoke(
    updateHandler,
    apiEvent({ method: 'PUT', path: `/api/channels/${id}`, headers: bearer(s), params: { channelId: id }, body: body as object }),
  );
const remove = (s: string, id: string) =>
  invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/channels/${id}`, headers: bearer(s), params: { channelId: id } }));
const test = (s: string, id: string, body: unknown = {}) =>
  invoke(
    testHandler,
    apiEvent({ method: 'POST', path: `/api/channels/${id}/test`, headers: bearer(s), params: { channelId: id }, body: body as object }),
  );

async function givenAdmins() {
  const a = await givenAccount();
  const [adminSession, memberSession] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email)]);
  return { ...a, adminSession, memberSession };
}

describe('approval channels: console routes', () => {
  it('create, read, list, change and delete; secrets are sealed, shown masked, never returned', async () => {
    const { account, adminSession, memberSession } = await givenAdmins();
    const created = await create(adminSession, slackBody('ops-slack', { defaultChannel: '#deploys' }));
    expect(created.status, created.body).toBe(201);
    const id = created.json.id as string;
    expect(created.headers.location).toBe(`/api/channels/${id}`);
    expect(created.json).toEqual({
      id: expect.stringMatching(/^ch_/),
      name: 'ops-slack',
      type: 'slack',
      defaultChannel: '#deploys',
      interactionsUrl: `http://flowgate.test/api/integrations/slack/${id}/interactions`,
      botToken: '••••alue',
      signingSecret: '••••',
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    const raw = JSON.stringify(
      (await db().send(new GetCommand({ TableName: tableName(), Key: { PK: `CHANNELS#${account.accountId}`, SK: `CH#${id}` } }))).Item,
    );
    expect(raw).not.toContain(TOKEN);
    expect(raw).not.toContain(SIGNING);
    const stored = await getChannel(account.accountId, id);
    expect(await openChannel(stored!)).toMatchObject({ botToken: TOKEN, signingSecret: SIGNING, defaultChannel: '#deploys' });

    const mail = await create(adminSession, { type: 'email', name: 'mail', from: 'approvals@example.com' });
    expect(mail.json).toMatchObject({ type: 'email', from: 'approvals@example.com' });
    const teams = await create(adminSession, { type: 'teams', name: 'Team-Chat', webhookUrl: `${chat.base}/teams/abc?sig=topsecret` });
    expect(teams.json).toMatchObject({ type: 'teams', webhookUrl: `${chat.base}/••••` });

    // Members read (masked); names sort case-insensitively.
    const listed = await list(memberSession);
    expect(listed.status).toBe(200);
    expect(listed.json.items.map((c: { name: string }) => c.name)).toEqual(['mail', 'ops-slack', 'Team-Chat']);
    expect(listed.body).not.toContain(TOKEN);
    expect(listed.body).not.toContain('topsecret');
    expect((await get(memberSession, id)).json).toEqual(created.json);

    // Unique names, in any case.
    expectProblem(await create(adminSession, slackBody('OPS-SLACK')), 409, 'CHANNEL_EXISTS');

    // A change keeps what is not sent; a new token is sealed again; defaultChannel null removes it.
    const changed = await update(adminSession, id, { botToken: 'xoxb-9999-new-token-wxyz', defaultChannel: null });
    expect(changed.status, changed.body).toBe(200);
    expect(changed.json).toMatchObject({ botToken: '••••wxyz', defaultChannel: null, name: 'ops-slack' });
    expect(await openChannel((await getChannel(account.accountId, id))!)).toMatchObject({
      botToken: 'xoxb-9999-new-token-wxyz',
      signingSecret: SIGNING,
    });
    expect((await getChannel(account.accountId, id))?.defaultChannel).toBeUndefined();
    // Renaming frees the old name and takes the new one.
    expect((await update(adminSession, id, { name: 'slack-2' })).json.name).toBe('slack-2');
    expect((await create(adminSession, slackBody('ops-slack'))).status).toBe(201);
    expectProblem(await update(adminSession, id, { name: 'mail' }), 409, 'CHANNEL_EXISTS');
    // A field of another type is refused with its path.
    const foreign = await update(adminSession, id, { from: 'x@example.com' });
    expectProblem(foreign, 400, 'VALIDATION_FAILED');
    expect(foreign.json.errors).toEqual([{ path: 'from', message: 'not a field of a slack channel' }]);

    expect((await remove(adminSession, id)).status).toBe(204);
    expectProblem(await get(adminSession, id), 404, 'CHANNEL_NOT_FOUND');
    expectProblem(await remove(adminSession, id), 404, 'CHANNEL_NOT_FOUND');
    expect((await create(adminSession, slackBody('slack-2'))).status).toBe(201);
  });

  it('members may not write, other accounts see nothing, bad input is a 400 with the path', async () => {
    const { adminSession, memberSession } = await givenAdmins();
    const other = await givenAdmins();
    const { json: ch } = await create(adminSession, slackBody('mine'));
    expectProblem(await create(memberSession, slackBody('theirs')), 403, 'ADMIN_ONLY');
    expectProblem(await update(memberSession, ch.id, { name: 'x' }), 403, 'ADMIN_ONLY');
    expectProblem(await remove(memberSession, ch.id), 403, 'ADMIN_ONLY');
    expectProblem(await test(memberSession, ch.id), 403, 'ADMIN_ONLY');
    expectProblem(await get(other.adminSession, ch.id), 404, 'CHANNEL_NOT_FOUND');
    expectProblem(await update(other.adminSession, ch.id, { name: 'stolen' }), 404, 'CHANNEL_NOT_FOUND');
    expectProblem(await remove(other.adminSession, ch.id), 404, 'CHANNEL_NOT_FOUND');
    expect((await list(other.adminSession)).json.items).toEqual([]);
    // The same name in another account is fine.
    expect((await create(other.adminSession, slackBody('mine'))).status).toBe(201);

    for (const [body, path] of [
      [slackBody('x', { botToken: 'not-a-token' }), 'botToken'],
      [slackBody('has space'), 'name'],
      [slackBody('x', { defaultChannel: 'deploys' }), 'defaultChannel'],
      [{ type: 'email', name: 'm', from: 'not an address' }, 'from'],
      [{ type: 'teams', name: 't', webhookUrl: 'http://example.com/hook' }, 'webhookUrl'],
      [{ type: 'fax', name: 'f' }, 'type'],
      [{ ...slackBody('x'), extra: 1 }, 'extra'],
    ] as const) {
      const res = await create(adminSession, body);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await list(adminSession)).json.items.map((c: { name: string }) => c.name)).toEqual(['mine']);
  });

  it("test sends a message and reports the provider's answer", async () => {
    const { adminSession, admin } = await givenAdmins();
    const { json: ok } = await create(adminSession, slackBody('s-ok', { defaultChannel: '#deploys' }));
    const tested = await test(adminSession, ok.id);
    expect(tested.json).toEqual({ ok: true, status: 200, error: null, retryAfterSeconds: null });
    const sent = chat.calls('chat.postMessage').at(-1);
    expect(sent?.body).toMatchObject({ channel: '#deploys', text: expect.stringContaining('s-ok') });
    expect(sent?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect((await test(adminSession, ok.id, { to: '#missing' })).json).toMatchObject({ ok: false, error: 'channel_not_found' });
    const { json: bad } = await create(adminSession, slackBody('s-bad', { botToken: 'xoxb-0000-tokenbad', defaultChannel: '#x' }));
    expect((await test(adminSession, bad.id)).json).toMatchObject({ ok: false, error: 'invalid_auth' });

    const { json: teams } = await create(adminSession, { type: 'teams', name: 't', webhookUrl: `${chat.base}/teams/ok` });
    expect((await test(adminSession, teams.id)).json).toEqual({ ok: true, status: 202, error: null, retryAfterSeconds: null });
    expect(chat.calls('/teams/ok').at(-1)?.body.attachments[0].contentType).toBe('application/vnd.microsoft.card.adaptive');
    const { json: failing } = await create(adminSession, { type: 'teams', name: 'f', webhookUrl: `${chat.base}/teams/fail` });
    expect((await test(adminSession, failing.id)).json).toMatchObject({ ok: false, status: 500 });
    // The webhook obeys the http_request egress rules: a private address is refused before anything is sent.
    const { json: inside } = await create(adminSession, { type: 'teams', name: 'inside', webhookUrl: 'https://10.1.2.3/hook' });
    expect((await test(adminSession, inside.id)).json).toEqual({
      ok: false,
      status: null,
      error: expect.stringContaining('TARGET_FORBIDDEN'),
      retryAfterSeconds: null,
    });

    // Email: SES v2 through the emulator; the default recipient is the admin.
    const { json: mail } = await create(adminSession, { type: 'email', name: 'm', from: 'approvals@example.com' });
    expect((await test(adminSession, mail.id)).json).toEqual({ ok: true, status: 200, error: null, retryAfterSeconds: null });
    const store = (await (await fetch(`${process.env.AWS_ENDPOINT_URL_SESV2}/store`)).json()) as {
      emails: { from: string; destination: { to: string[] }; body: { text: string } }[];
    };
    expect(
      store.emails.some(
        (m) => m.from === 'approvals@example.com' && m.destination.to[0] === admin.email && m.body.text.includes('channel m'),
      ),
    ).toBe(true);
  });

  it('a view round-trips: GET then PUT of its writable fields changes nothing, for every kind; type cannot change', async () => {
    const { account, adminSession } = await givenAdmins();
    // One channel per kind (keyed by the list, so a new kind does not compile without its example), each with every setting.
    const examples: { [T in ChannelType]: Record<string, unknown> } = {
      slack: slackBody('rt-slack', { defaultChannel: '#deploys' }),
      email: { type: 'email', name: 'rt-mail', from: 'approvals@example.com' },
      teams: { type: 'teams', name: 'rt-teams', webhookUrl: `${chat.base}/teams/ok?sig=roundtrip` },
    };
    for (const type of CHANNEL_TYPES) {
      const created = await create(adminSession, examples[type]);
      expect(created.status, created.body).toBe(201);
      const id = created.json.id as string;
      const opened = await openChannel((await getChannel(account.accountId, id))!);
      const view = (await get(adminSession, id)).json;
      const writable = ['name', 'type', ...Object.keys(channelKinds[type].settings)];
      const sent = Object.fromEntries(writable.filter((f) => f in view).map((f) => [f, view[f]]));
      // Every setting of the kind is in the view (the masks of the write-only ones), so all of them go back.
      expect(Object.keys(sent).sort(), type).toEqual([...writable].sort());
      const put = await update(adminSession, id, sent);
      expect(put.status, `${type}: ${put.body}`).toBe(200);
      expect({ ...put.json, updatedAt: 0 }).toEqual({ ...view, updatedAt: 0 });
      // The write-only values are the stored ones still: the channel opens as before and a test message authenticates.
      expect(await openChannel((await getChannel(account.accountId, id))!)).toEqual(opened);
      const tested = await test(adminSession, id);
      expect(tested.json, type).toMatchObject({ ok: true });

      // Another type is refused, and changes nothing; a mask that is not the one shown is refused at its field.
      const other = CHANNEL_TYPES.find((t) => t !== type) as ChannelType;
      const changed = await update(adminSession, id, { ...sent, type: other });
      expectProblem(changed, 400, 'IMMUTABLE_FIELD');
      expect(changed.json.errors).toEqual([{ path: 'type', message: expect.stringContaining(type) }]);
      expectProblem(await update(adminSession, id, { type: 'fax' }), 400, 'VALIDATION_FAILED');
      for (const f of Object.keys(channelKinds[type].secrets)) {
        const wrong = await update(adminSession, id, { [f]: `${String(view[f])}x` });
        expectProblem(wrong, 400, 'VALIDATION_FAILED');
        expect(wrong.json.errors.map((e: { path: string }) => e.path)).toEqual([f]);
        // A mask on a create keeps nothing: refused with its path.
        const masked = await create(adminSession, { ...examples[type], name: `${type}-masked`, [f]: view[f] });
        expectProblem(masked, 400, 'VALIDATION_FAILED');
        expect(masked.json.errors.map((e: { path: string }) => e.path)).toEqual([f]);
      }
      expect(await openChannel((await getChannel(account.accountId, id))!)).toEqual(opened);
      expect((await get(adminSession, id)).json).toMatchObject({ ...view, updatedAt: expect.any(Number) });
    }
  });
});
