import { beforeAll, describe, expect, it } from 'vitest';
import { handler as startRunHandler } from '../../functions/http/v1/workflows/start-run.ts';
import { handler as v1GetHandler } from '../../functions/http/v1/workflows/get.ts';
import { handler as v1ListHandler } from '../../functions/http/v1/workflows/list.ts';
import { handler as createHandler } from '../../functions/http/workflows/create.ts';
import { handler as deleteHandler } from '../../functions/http/workflows/delete.ts';
import { handler as getHandler } from '../../functions/http/workflows/get.ts';
import { handler as listHandler } from '../../functions/http/workflows/list.ts';
import { handler as updateHandler } from '../../functions/http/workflows/update.ts';
import { createUser } from '../../shared/domain/accounts.ts';
import { createKey } from '../../shared/domain/keys.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import type { Scope } from '../../shared/db/entities/api-key.ts';
import { resetConfig } from '../../shared/config.ts';
import { useOwnQueues } from '../support/engine.ts';
import { givenAccount, PASSWORD, uniqueEmail } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { EXAMPLE_SECRET, exampleDefinition } from '../support/definitions.ts';

/** Console workflows (`/api/workflows`, session) and the v1 workflow reads (API key), through the handlers. */

const SECRET = EXAMPLE_SECRET;
const KiB = 1024;

const create = (session: string, body: unknown) =>
  invoke(createHandler, apiEvent({ method: 'POST', path: '/api/workflows', headers: bearer(session), body: body as object }));
const createRaw = (session: string, raw: string) =>
  invoke(
    createHandler,
    apiEvent({ method: 'POST', path: '/api/workflows', headers: { ...bearer(session), 'content-type': 'application/json' }, body: raw }),
  );
const get = (session: string, id: string) =>
  invoke(getHandler, apiEvent({ path: `/api/workflows/${id}`, headers: bearer(session), params: { id } }));
const list = (session: string, query?: Record<string, string>) =>
  invoke(listHandler, apiEvent({ path: '/api/workflows', headers: bearer(session), ...(query ? { query } : {}) }));
const update = (session: string, id: string, body: unknown) =>
  invoke(
    updateHandler,
    apiEvent({ method: 'PUT', path: `/api/workflows/${id}`, headers: bearer(session), params: { id }, body: body as object }),
  );
const remove = (session: string, id: string) =>
  invoke(deleteHandler, apiEvent({ method: 'DELETE', path: `/api/workflows/${id}`, headers: bearer(session), params: { id } }));
const v1List = (token: string, query?: Record<string, string>) =>
  invoke(v1ListHandler, apiEvent({ path: '/api/v1/workflows', headers: bearer(token), ...(query ? { query } : {}) }));
const v1Get = (token: string, workflowId: string) =>
  invoke(v1GetHandler, apiEvent({ path: `/api/v1/workflows/${workflowId}`, headers: bearer(token), params: { workflowId } }));
const v1Start = (token: string, workflowId: string, body: unknown = {}) =>
  invoke(
    startRunHandler,
    apiEvent({
      method: 'POST',
      path: `/api/v1/workflows/${workflowId}/runs`,
      headers: bearer(token),
      params: { workflowId },
      body: body as object,
    }),
  );

/** Every page of a list, following `nextCursor`. */
async function allPages(read: (cursor?: string) => Promise<{ status: number; json: any }>, limit: number) {
  const items: any[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await read(cursor);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.items.length).toBeLessThanOrEqual(limit);
    items.push(...res.json.items);
    if (res.json.nextCursor === null) return items;
    cursor = res.json.nextCursor;
  }
  throw new Error('more than 50 pages');
}

const simple = (extra: Record<string, unknown> = {}) => ({ steps: [{ id: 'a', type: 'set', values: { x: 1 } }], ...extra });

/** A full example definition (the format: docs/workflows.md), with an array variable and a credential in a step header. */
const example = () => {
  const d = exampleDefinition();
  d.variables = { ...d.variables, labels: { type: 'array' } };
  d.steps[2].headers = { ...d.steps[2].headers, authorization: 'Bearer not-for-v1-eyes' };
  return d;
};

const pathsOf = (res: { json: any }) => (res.json?.errors ?? []).map((e: { path: string }) => e.path);
const keyWith = async (u: { accountId: string; userId: string }, scopes: Scope[]) =>
  (await createKey({ accountId: u.accountId, userId: u.userId }, { name: scopes.join('+') || 'none', scopes, validityDays: 1 })).token;
const tick = () => new Promise((r) => setTimeout(r, 3));

beforeAll(async () => {
  // The cross-account test starts (or tries to start) runs: keep any queue message in this file.
  await useOwnQueues();
});

describe('console workflows: create, read, list', () => {
  it('creates with 201, Location, a wf_ id, the caller as owner and version 1, and reads it back', async () => {
    const { member, admin } = await givenAccount();
    const session = await sessionOf(member.email);
    const res = await create(session, { name: '  Deploy  ', description: 'ships it', definition: example() });
    expect(res.status, res.body).toBe(201);
    expect(res.json.id).toMatch(/^wf_[0-9a-z]{26}$/);
    expect(res.headers.location).toBe(`/api/workflows/${res.json.id}`);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.json).toMatchObject({
      name: 'Deploy',
      description: 'ships it',
      ownerId: member.userId,
      editors: [],
      recovery: false,
      version: 1,
    });
    expect(res.json.createdAt).toBe(res.json.updatedAt);
    expect(res.json.createdAt).toBeGreaterThan(Date.now() - 60_000);
    // Defaults are filled in the stored definition.
    expect(res.json.definition.steps[1]).toMatchObject({ onReject: 'fail', form: [{ required: true }, { required: false }] });
    expect(res.json.definition.steps[2]).toMatchObject({ allowFailure: false });

    const got = await get(session, res.json.id);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);
    // Every member of the account may read it.
    expect((await get(await sessionOf(admin.email), res.json.id)).json).toEqual(res.json);

    // Without a session: 401 with WWW-Authenticate.
    const anonymous = await invoke(getHandler, apiEvent({ path: `/api/workflows/${res.json.id}`, params: { id: res.json.id } }));
    expectProblem(anonymous, 401, 'UNAUTHORIZED');
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
  });

  it('keeps recovery and (deduplicated) editors given at creation; unknown ids are 404', async () => {
    const { admin, member } = await givenAccount();
    const session = await sessionOf(admin.email);
    const res = await create(session, { name: 'w', definition: simple(), recovery: true, editors: [member.userId, member.userId] });
    expect(res.status, res.body).toBe(201);
    expect(res.json).toMatchObject({ recovery: true, editors: [member.userId], ownerId: admin.userId });
    expectProblem(await get(session, 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'WORKFLOW_NOT_FOUND');
    for (const bad of ['wf_x', '../etc', 'WF#1', `${res.json.id}x`, res.json.id.toUpperCase()])
      expect((await get(session, bad)).status, bad).toBe(404);
  });

  it('lists newest first, pages with limit and cursor, and refuses a tampered or foreign cursor', async () => {
    const { admin, member } = await givenAccount();
    const other = await givenAccount();
    const session = await sessionOf(admin.email);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await create(session, { name: `wf ${i}`, definition: simple() });
      expect(res.status).toBe(201);
      ids.push(res.json.id);
      await tick();
    }
    const newestFirst = [...ids].reverse();

    const all = await list(session);
    expect(all.status).toBe(200);
    expect(all.json.items.map((w: { id: string }) => w.id)).toEqual(newestFirst);
    expect(all.json.nextCursor).toBeNull();
    expect(all.json.items[0]).toMatchObject({ name: 'wf 4', ownerId: admin.userId, version: 1, definition: simple() });
    // Members see the account's workflows too.
    const memberSession = await sessionOf(member.email);
    expect((await list(memberSession)).json.items.map((w: { id: string }) => w.id)).toEqual(newestFirst);

    const paged = await allPages((cursor) => list(session, { limit: '2', ...(cursor ? { cursor } : {}) }), 2);
    expect(paged.map((w) => w.id)).toEqual(newestFirst);
    const first = await list(session, { limit: '2' });
    expect(first.json.items).toHaveLength(2);
    const cursor = first.json.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect((await list(memberSession, { limit: '2', cursor })).json.items.map((w: { id: string }) => w.id)).toEqual(
      newestFirst.slice(2, 4),
    );

    const [payload, mac] = cursor.split('.') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), b: `workflows:${other.account.accountId}` }),
    ).toString('base64url');
    for (const bad of [flip(cursor, 3), `${payload}.${flip(mac, 5)}`, `${forged}.${mac}`, `${cursor}.x`, 'x.y', 'garbage', payload, '.']) {
      expectProblem(await list(session, { cursor: bad }), 400, 'INVALID_CURSOR');
    }
    // A real cursor of another account is refused (bound to the query that produced it).
    const otherSession = await sessionOf(other.admin.email);
    for (let i = 0; i < 2; i++) expect((await create(otherSession, { name: `o${i}`, definition: simple() })).status).toBe(201);
    const foreign = (await list(otherSession, { limit: '1' })).json.nextCursor as string;
    expect(foreign).toEqual(expect.any(String));
    expectProblem(await list(session, { cursor: foreign }), 400, 'INVALID_CURSOR');

    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) expectProblem(await list(session, { limit }), 400, 'VALIDATION_FAILED');
  });
});

describe('console workflows: invalid definitions', () => {
  let session: string;
  let before: string[];
  const ids = async () => (await list(session, { limit: '100' })).json.items.map((w: { id: string }) => w.id);

  beforeAll(async () => {
    const { admin } = await givenAccount();
    session = await sessionOf(admin.email);
    expect((await create(session, { name: 'existing', definition: simple() })).status).toBe(201);
    before = await ids();
  });

  const refused = async (definition: unknown, path: string) => {
    const res = await create(session, { name: 'bad', definition });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(res.json.errors).toEqual(expect.arrayContaining([{ path, message: expect.any(String) }]));
    return res;
  };

  it('an unknown step type, at definition.steps.<i>.type', async () => {
    const res = await refused(
      {
        steps: [
          { id: 'a', type: 'set', values: {} },
          { id: 'b', type: 'shell', command: 'rm -rf /' },
        ],
      },
      'definition.steps.1.type',
    );
    expect(pathsOf(res)).toEqual(['definition.steps.1.type']);
  });

  it('duplicate step ids, at the later one', async () => {
    const res = await refused(
      {
        steps: [
          { id: 'a', type: 'set', values: {} },
          { id: 'b', type: 'delay', seconds: 1 },
          { id: 'a', type: 'fail', message: 'x' },
        ],
      },
      'definition.steps.2.id',
    );
    expect(pathsOf(res)).toEqual(['definition.steps.2.id']);
    expect(res.json.errors[0].message).toContain('duplicate step id "a"');
  });

  it('more than 100 steps (100 are fine)', async () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `s${i}`, type: 'delay', seconds: 1 }));
    expect(pathsOf(await refused({ steps: steps(101) }, 'definition.steps'))).toEqual(['definition.steps']);
    await refused({ steps: [] }, 'definition.steps');
    const ok = await create(session, { name: 'hundred', definition: { steps: steps(100) } });
    expect(ok.status, ok.body).toBe(201);
    const del = await remove(session, ok.json.id);
    expect(del.status).toBe(204);
  });

  it('a broken JSONata expression deep inside, at its exact path', async () => {
    const res = await refused(
      {
        steps: [
          { id: 'a', type: 'set', values: { fine: '{% 1 + 1 %}' } },
          {
            id: 'call',
            type: 'http_request',
            method: 'POST',
            url: 'https://ops.example/hook',
            body: { outer: { list: [1, { inner: ['ok', '{% $vars.x + (  %}'] }] } },
          },
        ],
      },
      'definition.steps.1.body.outer.list.1.inner.1',
    );
    expect(pathsOf(res)).toEqual(['definition.steps.1.body.outer.list.1.inner.1']);
    await refused(simple({ output: { report: { summary: '{% $vars.a & %}' } } }), 'definition.output.report.summary');
    await refused(
      {
        steps: [
          {
            id: 'ask',
            type: 'manual_approval',
            title: 'ok?',
            reviewers: ['role:admin'],
            form: [{ name: 'n', type: 'number', default: '{% ]] %}' }],
          },
        ],
      },
      'definition.steps.0.form.0.default',
    );
    await refused({ steps: [{ id: 'a', type: 'fail', when: '{% $vars.a = %}', message: 'x' }] }, 'definition.steps.0.when');
  });

  it('a bad reviewer, at definition.steps.<i>.reviewers.<j>', async () => {
    for (const reviewer of ['role:owner', 'user:someone', 'usr_01jzzzzzzzzzzzzzzzzzzzzzzz', 'admin', '']) {
      const res = await refused(
        { steps: [{ id: 'ask', type: 'manual_approval', title: 'ok?', reviewers: ['role:admin', reviewer] }] },
        'definition.steps.0.reviewers.1',
      );
      expect(pathsOf(res), reviewer).toEqual(['definition.steps.0.reviewers.1']);
    }
    await refused({ steps: [{ id: 'ask', type: 'manual_approval', title: 'ok?', reviewers: [] }] }, 'definition.steps.0.reviewers');
  });

  it('an http_request url that is not an absolute http(s) URL', async () => {
    for (const url of ['not a url', 'ftp://ops.example/x', '/relative/path', 'https://', 'javascript:alert(1)', '']) {
      const res = await refused(
        {
          steps: [
            { id: 'a', type: 'set', values: {} },
            { id: 'call', type: 'http_request', url },
          ],
        },
        'definition.steps.1.url',
      );
      expect(pathsOf(res), url).toEqual(['definition.steps.1.url']);
    }
  });

  it('several faults at once are all reported; name, editors and unknown definition fields too', async () => {
    const res = await create(session, {
      name: '   ',
      editors: ['bob'],
      definition: {
        steps: [
          { id: 'a', type: 'delay', seconds: 0 },
          { id: 'a', type: 'set', values: { 'bad name': 1 } },
        ],
        extra: true,
      },
    });
    expectProblem(res, 400, 'VALIDATION_FAILED');
    expect(pathsOf(res)).toEqual(
      expect.arrayContaining(['name', 'editors.0', 'definition.steps.0.seconds', 'definition.steps.1.id', 'definition.extra']),
    );
  });

  it('a body over 256 KiB is 413 before anything else (a body just under it is accepted)', async () => {
    const big = { name: 'big', definition: simple({ output: 'x'.repeat(256 * KiB) }) };
    const res = await create(session, big);
    expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
    // The size check comes before authentication.
    const anonymous = await invoke(createHandler, apiEvent({ method: 'POST', path: '/api/workflows', body: big }));
    expect(anonymous.status).toBe(413);

    const near = await create(session, { name: 'near', definition: simple({ output: 'x'.repeat(250 * KiB) }) });
    expect(near.status, near.body?.slice(0, 300)).toBe(201);
    expect((await remove(session, near.json.id)).status).toBe(204);
  });

  it('a body that is not JSON, not an object or not declared JSON is refused', async () => {
    expectProblem(await createRaw(session, '{"name":'), 400, 'INVALID_JSON');
    expectProblem(await createRaw(session, '[1,2]'), 400, 'BODY_NOT_OBJECT');
    const text = await invoke(
      createHandler,
      apiEvent({
        method: 'POST',
        path: '/api/workflows',
        headers: { ...bearer(session), 'content-type': 'text/plain' },
        body: JSON.stringify({ name: 'x', definition: simple() }),
      }),
    );
    expectProblem(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('wrote nothing for any refused request', async () => {
    expect(await ids()).toEqual(before);
  });
});

describe('console workflows: event notification targets the egress rules can never reach', () => {
  const target = (url: string) => ({ url, events: ['execution.succeeded'], secret: SECRET });
  const allowing = async <T>(allowlist: string, f: () => Promise<T>) => {
    process.env.HTTP_STEP_ALLOWLIST = allowlist;
    resetConfig();
    try {
      return await f();
    } finally {
      delete process.env.HTTP_STEP_ALLOWLIST;
      resetConfig();
    }
  };

  it('refuses a loopback or private address HTTP_STEP_ALLOWLIST does not permit when saved, at definition.notifications.<i>.url; permitted, it is saved', async () => {
    const { admin } = await givenAccount();
    const session = await sessionOf(admin.email);
    const loopback = ['http://127.0.0.1:9/hook', 'https://localhost/hook', 'https://[::1]:8443/hook'];
    // Without HTTP_STEP_ALLOWLIST: every IP literal or localhost name in a forbidden range is refused; a host name is decided at delivery.
    const refused = await create(session, {
      name: 'unreachable',
      definition: simple({ notifications: [...loopback, 'https://10.1.2.3/hook', 'https://hooks.example/in'].map(target) }),
    });
    expectProblem(refused, 400, 'VALIDATION_FAILED');
    expect(refused.json.errors).toEqual(
      [0, 1, 2, 3].map((i) => ({ path: `definition.notifications.${i}.url`, message: expect.stringContaining('HTTP_STEP_ALLOWLIST') })),
    );

    // The operator allows loopback (local mode: docs/local-mode.md): saved; a private address outside the list is still refused, on update too.
    const saved = await allowing('127.0.0.1/32,::1/128', () =>
      create(session, { name: 'loopback', definition: simple({ notifications: [...loopback, 'https://hooks.example/in'].map(target) }) }),
    );
    expect(saved.status, saved.body).toBe(201);
    const updated = await allowing('127.0.0.1/32,::1/128', () =>
      update(session, saved.json.id, {
        definition: simple({ notifications: [target(loopback[0] as string), target('https://10.1.2.3/hook')] }),
      }),
    );
    expectProblem(updated, 400, 'VALIDATION_FAILED');
    expect(pathsOf(updated)).toEqual(['definition.notifications.1.url']);
    expect((await get(session, saved.json.id)).json.version).toBe(1);
  });
});

describe('console workflows: literal JSON the store must hold (never a 500)', () => {
  let session: string;
  let existing: string;
  beforeAll(async () => {
    const { admin } = await givenAccount();
    session = await sessionOf(admin.email);
    existing = (await create(session, { name: 'existing', definition: simple() })).json.id;
  });

  const deep = (n: number): unknown => (n === 0 ? 'bottom' : { d: deep(n - 1) });
  const cases: [string, Record<string, unknown>][] = [
    ['an integer beyond 2^53 in a set value', { steps: [{ id: 'a', type: 'set', values: { big: 1e16 } }] }],
    ['a huge double in the output', simple({ output: { n: 1.7976931348623157e308 } })],
    ['a tiny double in an artifact', { steps: [{ id: 'a', type: 'artifact', name: 'n.json', content: { n: 5e-324 } }] }],
    ['an empty key in the output', simple({ output: { '': 'x' } })],
    [
      'a key named constructor in a request body',
      { steps: [{ id: 'a', type: 'http_request', method: 'POST', url: 'https://ops.example/x', body: { constructor: { name: 'Map' } } }] },
    ],
    ['a set value nested 30 levels (the schema allows 64)', { steps: [{ id: 'a', type: 'set', values: { x: deep(30) } }] }],
    [
      'a variable default nested 30 levels',
      { variables: { o: { type: 'object', default: deep(30) } }, steps: [{ id: 'a', type: 'set', values: {} }] },
    ],
  ];
  for (const [what, definition] of cases) {
    it(`create and update with ${what}`, async () => {
      for (const res of [await create(session, { name: what, definition }), await update(session, existing, { definition })]) {
        expect(res.status, `${res.status} ${res.body?.slice(0, 300)}`).toBeLessThan(500);
        if (res.status === 201 || res.status === 200) {
          // As stored: the definition with the schema's defaults filled in.
          const expected = JSON.parse(JSON.stringify(WorkflowDefinition.parse(definition)));
          expect(res.json.definition).toEqual(expected);
          expect((await get(session, res.json.id)).json.definition).toEqual(expected);
        } else {
          expectProblem(res, 400, 'VALIDATION_FAILED');
          expect(
            pathsOf(res).every((p: string) => p.startsWith('definition.')),
            res.body,
          ).toBe(true);
        }
      }
    });
  }
});

describe('console workflows: update and delete', () => {
  let account: Awaited<ReturnType<typeof givenAccount>>;
  let owner: { userId: string; email: string };
  let editor: { userId: string; email: string };
  let outsider: { userId: string; email: string };
  const sessions: Record<'owner' | 'editor' | 'outsider' | 'admin', string> = { owner: '', editor: '', outsider: '', admin: '' };

  beforeAll(async () => {
    account = await givenAccount();
    owner = account.member;
    [editor, outsider] = await Promise.all([
      createUser(account.account.accountId, uniqueEmail('editor'), PASSWORD, 'member'),
      createUser(account.account.accountId, uniqueEmail('outsider'), PASSWORD, 'member'),
    ]);
    sessions.owner = await sessionOf(owner.email);
    sessions.editor = await sessionOf(editor.email);
    sessions.outsider = await sessionOf(outsider.email);
    sessions.admin = await sessionOf(account.admin.email);
  });

  const givenWorkflow = async () => {
    const res = await create(sessions.owner, {
      name: 'original',
      description: 'first',
      definition: example(),
      recovery: true,
      editors: [editor.userId],
    });
    expect(res.status, res.body).toBe(201);
    return res.json as { id: string; version: number; updatedAt: number; definition: unknown; editors: string[] };
  };

  it('the owner, a listed editor and an admin may update; each update increments the version', async () => {
    const w = await givenWorkflow();
    const byOwner = await update(sessions.owner, w.id, { name: 'renamed' });
    expect(byOwner.status, byOwner.body).toBe(200);
    expect(byOwner.json).toMatchObject({ id: w.id, name: 'renamed', version: 2, ownerId: owner.userId });
    expect(byOwner.json.updatedAt).toBeGreaterThanOrEqual(w.updatedAt);

    const byEditor = await update(sessions.editor, w.id, { description: 'second' });
    expect(byEditor.status, byEditor.body).toBe(200);
    expect(byEditor.json).toMatchObject({ description: 'second', version: 3, ownerId: owner.userId });

    const byAdmin = await update(sessions.admin, w.id, { recovery: false });
    expect(byAdmin.status, byAdmin.body).toBe(200);
    expect(byAdmin.json).toMatchObject({ recovery: false, version: 4, ownerId: owner.userId });

    const got = await get(sessions.outsider, w.id);
    expect(got.json).toEqual(byAdmin.json);
  });

  it('a partial update keeps every other field', async () => {
    const w = await givenWorkflow();
    const res = await update(sessions.owner, w.id, { name: 'only the name' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      ...w,
      name: 'only the name',
      version: 2,
      updatedAt: res.json.updatedAt,
    });
    const definition = simple({ variables: { n: { type: 'number', default: 3 } } });
    const res2 = await update(sessions.owner, w.id, { definition });
    expect(res2.json).toMatchObject({ name: 'only the name', description: 'first', recovery: true, editors: [editor.userId], version: 3 });
    expect(res2.json.definition).toEqual(definition);
    expect((await get(sessions.owner, w.id)).json).toEqual(res2.json);
  });

  it('a member who is neither owner nor editor gets 403 NOT_WORKFLOW_EDITOR and changes nothing', async () => {
    const w = await givenWorkflow();
    expectProblem(await update(sessions.outsider, w.id, { name: 'hijacked' }), 403, 'NOT_WORKFLOW_EDITOR');
    // Nor may they add themselves as an editor.
    expectProblem(await update(sessions.outsider, w.id, { editors: [outsider.userId] }), 403, 'NOT_WORKFLOW_EDITOR');
    const got = await get(sessions.owner, w.id);
    expect(got.json).toMatchObject({ name: 'original', version: 1, editors: [editor.userId] });
  });

  it('editors must be users of this account (400), and are stored once each', async () => {
    const w = await givenWorkflow();
    const other = await givenAccount();
    for (const editors of [[other.admin.userId], ['usr_01jzzzzzzzzzzzzzzzzzzzzzzz'], [editor.userId, other.member.userId]]) {
      const res = await update(sessions.owner, w.id, { editors });
      expect(res.status, res.body).toBe(400);
      expect(res.json.code).toMatch(/^(INVALID_EDITORS|VALIDATION_FAILED)$/);
      expect(
        pathsOf(res).every((p: string) => p.startsWith('editors')),
        res.body,
      ).toBe(true);
      const created = await create(sessions.owner, { name: 'x', definition: simple(), editors });
      expect(created.status, created.body).toBe(400);
      expect(
        pathsOf(created).every((p: string) => p.startsWith('editors')),
        created.body,
      ).toBe(true);
    }
    // A malformed id is refused like an unknown one.
    expectProblem(await update(sessions.owner, w.id, { editors: ['not-a-user-id'] }), 400, 'INVALID_EDITORS');
    expect((await get(sessions.owner, w.id)).json).toMatchObject({ version: 1, editors: [editor.userId] });

    const dup = await update(sessions.owner, w.id, { editors: [outsider.userId, editor.userId, outsider.userId] });
    expect(dup.status).toBe(200);
    expect([...dup.json.editors].sort()).toEqual([editor.userId, outsider.userId].sort());
    // The new editor may now edit.
    expect((await update(sessions.outsider, w.id, { name: 'by new editor' })).status).toBe(200);
  });

  it('refuses an empty update and an invalid definition, keeping the version', async () => {
    const w = await givenWorkflow();
    expectProblem(await update(sessions.owner, w.id, {}), 400, 'VALIDATION_FAILED');
    const bad = await update(sessions.owner, w.id, {
      definition: {
        steps: [
          { id: 'a', type: 'set', values: {} },
          { id: 'b', type: 'teleport' },
        ],
      },
    });
    expectProblem(bad, 400, 'VALIDATION_FAILED');
    expect(pathsOf(bad)).toEqual(['definition.steps.1.type']);
    expectProblem(await update(sessions.owner, w.id, { name: '' }), 400, 'VALIDATION_FAILED');
    const huge = await update(sessions.owner, w.id, { definition: simple({ output: 'x'.repeat(257 * KiB) }) });
    expectProblem(huge, 413, 'PAYLOAD_TOO_LARGE');
    expect((await get(sessions.owner, w.id)).json).toEqual(w);
  });

  it('concurrent updates never lose one silently: each is applied in turn or refused with 409', async () => {
    const w = await givenWorkflow();
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => update(sessions.owner, w.id, { description: `concurrent ${i}` })),
    );
    const statuses = results.map((r) => r.status);
    for (const r of results) expect([200, 409], r.body).toContain(r.status);
    const applied = statuses.filter((s) => s === 200).length;
    expect(applied).toBeGreaterThan(0);
    for (const r of results.filter((x) => x.status === 409)) expect(r.json.code).toBe('WORKFLOW_CHANGED');
    const final = (await get(sessions.owner, w.id)).json;
    expect(final.version).toBe(1 + applied);
  });

  it('delete: a non-editor member gets 403; the owner gets 204, then the workflow is 404 everywhere', async () => {
    const w = await givenWorkflow();
    expectProblem(await remove(sessions.outsider, w.id), 403, 'NOT_WORKFLOW_EDITOR');
    expect((await get(sessions.owner, w.id)).status).toBe(200);

    const res = await remove(sessions.owner, w.id);
    expect(res.status).toBe(204);
    expect(res.body ?? '').toBe('');
    expectProblem(await get(sessions.owner, w.id), 404, 'WORKFLOW_NOT_FOUND');
    expect((await update(sessions.owner, w.id, { name: 'ghost' })).status).toBe(404);
    expect((await remove(sessions.owner, w.id)).status).toBe(404);
    expect((await list(sessions.owner, { limit: '100' })).json.items.map((x: { id: string }) => x.id)).not.toContain(w.id);
    expect((await v1Get(account.adminKey.token, w.id)).status).toBe(404);
    expect((await v1Start(account.adminKey.token, w.id)).status).toBe(404);

    // An editor and an admin may delete too.
    const w2 = await givenWorkflow();
    expect((await remove(sessions.editor, w2.id)).status).toBe(204);
    const w3 = await givenWorkflow();
    expect((await remove(sessions.admin, w3.id)).status).toBe(204);
  });
});

describe("another account's workflow", () => {
  it('is 404 on console GET, PUT and DELETE, and on v1 GET and start run, and stays unchanged', async () => {
    const mine = await givenAccount();
    const theirs = await givenAccount();
    const theirSession = await sessionOf(theirs.admin.email);
    const w = (await create(theirSession, { name: 'private', definition: example() })).json;
    expect(w.id).toEqual(expect.any(String));

    const mySession = await sessionOf(mine.admin.email);
    expectProblem(await get(mySession, w.id), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await update(mySession, w.id, { name: 'mine now' }), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await remove(mySession, w.id), 404, 'WORKFLOW_NOT_FOUND');
    expectProblem(await v1Get(mine.adminKey.token, w.id), 404, 'WORKFLOW_NOT_FOUND');
    const start = await v1Start(mine.adminKey.token, w.id, { variables: {} });
    expectProblem(start, 404, 'WORKFLOW_NOT_FOUND');
    expect(JSON.stringify(start.json)).not.toContain('private');
    expect((await list(mySession)).json.items).toEqual([]);
    expect((await v1List(mine.adminKey.token)).json.items).toEqual([]);

    expect((await get(theirSession, w.id)).json).toEqual(w);
    expect((await v1Get(theirs.adminKey.token, w.id)).status).toBe(200);
  });
});

describe('v1 workflows', () => {
  it('lists summaries (variables with type and default, steps with id, type and title), never secrets or the definition', async () => {
    const { admin, member, memberKey } = await givenAccount();
    const session = await sessionOf(admin.email);
    const full = await create(session, { name: 'full', description: 'everything', definition: example() });
    expect(full.status).toBe(201);
    await tick();
    const small = await create(session, {
      name: 'small',
      definition: {
        steps: [{ id: 'only', type: 'set', title: 'Only step', values: { y: 2 } }],
        notifications: [{ url: 'https://hooks.example/x', events: ['execution.succeeded'], secret: SECRET }],
      },
    });
    expect(small.status).toBe(201);

    const readOnly = await keyWith(member, ['WORKFLOW_READ']);
    for (const token of [readOnly, memberKey.token]) {
      const res = await v1List(token);
      expect(res.status, res.body).toBe(200);
      expect(res.json.nextCursor).toBeNull();
      expect(res.json.items.map((w: { workflowId: string }) => w.workflowId)).toEqual([small.json.id, full.json.id]);
      const [s, f] = res.json.items;
      expect(f).toMatchObject({
        workflowId: full.json.id,
        name: 'full',
        variables: {
          env: { type: 'string', default: 'staging' },
          amount: { type: 'number', default: 0 },
          urgent: { type: 'boolean', default: false },
          labels: { type: 'array', default: null },
        },
        steps: [
          { id: 'prepare', type: 'set', title: null },
          { id: 'approve', type: 'manual_approval', title: '{% $vars.summary %}' },
          { id: 'notify', type: 'http_request', title: null },
          { id: 'report', type: 'artifact', title: null },
          { id: 'cool-down', type: 'delay', title: null },
          { id: 'too-big', type: 'fail', title: null },
          { id: 'route', type: 'switch', title: null },
          { id: 'page', type: 'wait_for_callback', title: null },
          { id: 'each-region', type: 'for_each', title: null },
        ],
      });
      for (const step of f.steps) expect(Object.keys(step).sort()).toEqual(['id', 'title', 'type']);
      for (const v of Object.values(f.variables)) expect(Object.keys(v as object).sort()).toEqual(['default', 'type']);
      expect(s).toMatchObject({
        workflowId: small.json.id,
        name: 'small',
        variables: {},
        steps: [{ id: 'only', type: 'set', title: 'Only step' }],
      });
      for (const w of res.json.items) {
        expect(w).not.toHaveProperty('definition');
        expect(w).not.toHaveProperty('notifications');
        expect(w).not.toHaveProperty('id');
      }
      const text = res.body ?? '';
      expect(text).not.toContain('whsec_');
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('not-for-v1-eyes');
      expect(text).not.toContain('ops.example');
    }

    const paged = await allPages((cursor) => v1List(readOnly, { limit: '1', ...(cursor ? { cursor } : {}) }), 1);
    expect(paged.map((w) => w.workflowId)).toEqual([small.json.id, full.json.id]);
    expectProblem(await v1List(readOnly, { cursor: 'x.y' }), 400, 'INVALID_CURSOR');
    expectProblem(await v1List(readOnly, { limit: '1000' }), 400, 'VALIDATION_FAILED');

    const one = await v1Get(readOnly, full.json.id);
    expect(one.status).toBe(200);
    expect(one.json).toEqual((await v1List(readOnly)).json.items[1]);
    expect(one.body).not.toContain('whsec_');
    expect(one.json).not.toHaveProperty('definition');
    const two = await v1Get(readOnly, small.json.id);
    expect(two.body).not.toContain(SECRET);
    expectProblem(await v1Get(readOnly, 'wf_01jzzzzzzzzzzzzzzzzzzzzzzz'), 404, 'WORKFLOW_NOT_FOUND');
    expect((await v1Get(readOnly, 'nope')).status).toBe(404);
  });

  it('a key without WORKFLOW_READ gets 403 INSUFFICIENT_SCOPE; no key or a bad key gets 401', async () => {
    const { admin, member } = await givenAccount();
    const session = await sessionOf(admin.email);
    const w = (await create(session, { name: 'w', definition: simple() })).json;
    for (const scopes of [['WORKFLOW_EXECUTE'], ['WEBHOOK_TRIGGER', 'APPROVAL_RESPOND']] as Scope[][]) {
      const token = await keyWith(member, scopes);
      expectProblem(await v1List(token), 403, 'INSUFFICIENT_SCOPE');
      expectProblem(await v1Get(token, w.id), 403, 'INSUFFICIENT_SCOPE');
    }
    const noKey = await invoke(v1ListHandler, apiEvent({ path: '/api/v1/workflows' }));
    expect(noKey.status).toBe(401);
    expect(noKey.headers['www-authenticate']).toBe('Bearer');
    expect((await v1List(session)).status).toBe(401);
  });
});
