import { describe, expect, it } from 'vitest';
import { handler as createHandler } from '../../functions/http/workflows/create.ts';
import { handler as getHandler } from '../../functions/http/workflows/get.ts';
import { handler as listHandler } from '../../functions/http/workflows/list.ts';
import { handler as updateHandler } from '../../functions/http/workflows/update.ts';
import { getWorkflow } from '../../shared/db/entities/workflow.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';

/** Secrets in definitions are write-only: masked for every reader, kept by an update that echoes the mask. */

const NOTIFY_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const BEARER = 'Bearer sk_live_0123456789abcdefWXYZ';
const CUSTOM = 'custom-token-value-9876';
const SHORT = 'pw123';

const create = (s: string, body: object) =>
  invoke(createHandler, apiEvent({ method: 'POST', path: '/api/workflows', headers: bearer(s), body }));
const get = (s: string, id: string) => invoke(getHandler, apiEvent({ path: `/api/workflows/${id}`, headers: bearer(s), params: { id } }));
const list = (s: string) => invoke(listHandler, apiEvent({ path: '/api/workflows', headers: bearer(s) }));
const update = (s: string, id: string, body: object) =>
  invoke(updateHandler, apiEvent({ method: 'PUT', path: `/api/workflows/${id}`, headers: bearer(s), params: { id }, body }));

const definition = (): any => ({
  steps: [
    {
      id: 'call',
      type: 'http_request',
      method: 'POST',
      url: 'https://api.example/x',
      headers: {
        Authorization: BEARER,
        'X-Custom-Token': CUSTOM,
        Cookie: SHORT,
        'X-Trace': 'visible-value-123456',
      },
      secretHeaders: ['x-custom-token'],
    },
    {
      id: 'ref',
      type: 'http_request',
      url: 'https://api.example/y',
      headers: { authorization: "{% 'Bearer ' & $secrets.API_TOKEN %}", 'x-api-key': '{% $secrets.KEY %}' },
    },
  ],
  notifications: [{ url: 'https://hooks.example/a', events: ['execution.succeeded'], secret: NOTIFY_SECRET }],
});

const WHOLE = [NOTIFY_SECRET, BEARER, CUSTOM, SHORT, 'sk_live'];

async function given() {
  const acc = await givenAccount();
  const [admin, member] = await Promise.all([sessionOf(acc.admin.email), sessionOf(acc.member.email)]);
  const res = await create(admin, { name: 'secrets', definition: definition() });
  expect(res.status, res.body).toBe(201);
  return { ...acc, adminSession: admin, memberSession: member, id: res.json.id as string, created: res };
}

describe('secrets in workflow definitions', () => {
  it('are never returned whole, to a member or an admin, on create, get, list or update', async () => {
    const { adminSession, memberSession, id, created } = await given();
    const views = [created, await get(adminSession, id), await get(memberSession, id), await list(adminSession), await list(memberSession)];
    views.push(await update(adminSession, id, { name: 'renamed' }));
    for (const v of views) {
      expect(v.status).toBeLessThan(300);
      for (const secret of WHOLE) expect(v.body).not.toContain(secret);
    }
    const def = (await get(memberSession, id)).json.definition;
    expect(def.steps[0].headers).toEqual({
      Authorization: '••••WXYZ',
      'X-Custom-Token': '••••9876',
      Cookie: '••••',
      'X-Trace': 'visible-value-123456',
    });
    // References to account secrets hold no secret: shown as written.
    expect(def.steps[1].headers).toEqual(definition().steps[1].headers);
    expect(def.notifications[0].secret).toBe('••••LaSw');
  });

  it('an update that sends back what the view showed, or leaves the signing secret out, keeps the stored values', async () => {
    const { account, adminSession, memberSession, id } = await given();
    const shown = (await get(adminSession, id)).json.definition;
    const echoed = await update(adminSession, id, { definition: shown });
    expect(echoed.status, echoed.body).toBe(200);
    expect(echoed.json.definition).toEqual(shown);
    const { secret: _, ...withoutSecret } = shown.notifications[0];
    expect((await update(adminSession, id, { definition: { ...shown, notifications: [withoutSecret] } })).status).toBe(200);
    const stored = (await getWorkflow(account.accountId, id)) as any;
    expect(stored?.definition).toEqual(expect.objectContaining({ notifications: definition().notifications }));
    expect(stored.definition.steps[0].headers).toEqual(definition().steps[0].headers);
    expect(stored?.version).toBe(3);
    // A member who may not edit gets 403 and learns nothing either way.
    expect((await update(memberSession, id, { definition: shown })).status).toBe(403);
  });

  it('round-trips every kind of write-only value: GET, then PUT the definition unchanged, keeps each as stored', async () => {
    const acc = await givenAccount();
    const session = await sessionOf(acc.admin.email);
    const original = {
      steps: [
        ...definition().steps,
        {
          id: 'multi',
          type: 'http_request',
          url: 'https://api.example/z',
          headers: { 'x-api-key': "{% $secrets.A & ':' & $secrets.B3 %}", authorization: 'Basic dXNlcjpwYXNzd29yZA==' },
        },
      ],
      notifications: [
        ...definition().notifications,
        // A reference to an account secret holds no secret: shown as written (a mask of it would be no valid secret).
        { url: 'https://hooks.example/b', events: ['execution.failed'], secret: '{% $secrets.HOOK_SECRET3 %}' },
        { url: 'https://hooks.example/c', events: ['step.failed'], secret: 'whsec_QUJDREVGR0hJSktMTU5PUFFSU1RVVldY' },
      ],
    };
    const made = await create(session, { name: 'round trip', definition: original });
    expect(made.status, made.body).toBe(201);
    const id = made.json.id as string;
    const shown = (await get(session, id)).json.definition;
    expect(shown.notifications.map((n: { secret: string }) => n.secret)).toEqual(['••••LaSw', '{% $secrets.HOOK_SECRET3 %}', '••••VldY']);
    for (let round = 0; round < 2; round++) {
      const res = await update(session, id, { definition: (await get(session, id)).json.definition });
      expect(res.status, res.body).toBe(200);
      expect(res.json.definition).toEqual(shown);
      expect(((await getWorkflow(acc.account.accountId, id)) as any).definition).toEqual(WorkflowDefinition.parse(original));
    }
  });

  it('a new value replaces a secret; a mask that matches nothing is a 400 naming the field, changing nothing', async () => {
    const { account, adminSession, id } = await given();
    const shown = (await get(adminSession, id)).json.definition;
    const bad = structuredClone(shown);
    bad.steps[0].headers.Authorization = '••••AAAA';
    bad.steps[0].headers['X-Trace'] = '••••';
    bad.notifications[0].secret = '••••AAAA';
    bad.notifications.push({ url: 'https://hooks.example/new', events: ['execution.failed'] });
    const res = await update(adminSession, id, { definition: bad });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('VALIDATION_FAILED');
    expect(res.json.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'definition.notifications.0.secret',
      'definition.notifications.1.secret',
      'definition.steps.0.headers.Authorization',
      'definition.steps.0.headers.X-Trace',
    ]);
    expect((await getWorkflow(account.accountId, id))?.version).toBe(1);

    const next = structuredClone(shown);
    next.steps[0].headers.Authorization = 'Bearer new-token-value-1111';
    next.notifications[0].secret = 'whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0';
    const ok = await update(adminSession, id, { definition: next });
    expect(ok.status).toBe(200);
    expect(ok.json.definition.steps[0].headers.Authorization).toBe('••••1111');
    const stored = (await getWorkflow(account.accountId, id))?.definition as any;
    expect(stored.steps[0].headers.Authorization).toBe('Bearer new-token-value-1111');
    expect(stored?.notifications?.[0]?.secret).toBe('whsec_bmV3c2VjcmV0bmV3c2VjcmV0bmV3c2VjcmV0');
  });

  it('a create must carry the secrets themselves', async () => {
    const { adminSession } = await given();
    const def = definition();
    def.steps[0].headers.Authorization = '••••WXYZ';
    const { secret: _, ...noSecret } = def.notifications[0];
    const res = await create(adminSession, { name: 'x', definition: { ...def, notifications: [noSecret] } });
    expect(res.status).toBe(400);
    expect(res.json.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      'definition.notifications.0.secret',
      'definition.steps.0.headers.Authorization',
    ]);
  });
});
