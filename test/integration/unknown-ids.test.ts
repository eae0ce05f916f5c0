import { beforeAll, describe, expect, it } from 'vitest';
import { csrfToken } from '../../shared/console/csrf.ts';
import { routes } from '../../functions/routes.ts';
import { handler as createWebhookRoute } from '../../functions/http/webhooks/create.ts';
import { handler as updateWebhookRoute } from '../../functions/http/webhooks/update.ts';
import { handler as createWorkflowRoute } from '../../functions/http/workflows/create.ts';
import { handler as listRuns } from '../../functions/http/v1/executions/list.ts';
import type { Route } from '../../shared/http/route.ts';
import { createWebhook } from '../../shared/domain/webhooks.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { CreateWebhookBody } from '../../shared/schemas/webhooks.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, invoke } from '../support/http.ts';
import { sessionOf } from '../support/sessions.ts';
import { mintToken } from '../../shared/tokens.ts';

/**
 * A caller cannot know our id format and keys its error handling on `code`: an id of the wrong shape
 * gets exactly the answer of a well-formed id that does not exist, on every route with an id in its
 * path, and for the id-valued fields of bodies and queries.
 */

type Handler = Parameters<typeof invoke>[0];
let a: Awaited<ReturnType<typeof givenAccount>>;
let session: string;
let workflowId: string;

beforeAll(async () => {
  a = await givenAccount({ plan: 'enterprise' });
  session = await sessionOf(a.admin.email);
  const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
  const definition = WorkflowDefinition.parse({ steps: [{ id: 'mark', type: 'set', values: { marked: true } }] });
  workflowId = (await createWorkflow(actor, { name: 'ids', definition, recovery: false, editors: [] })).workflowId;
});

/** A valid body for each route that takes one, so only the id can be what is wrong. */
const BODIES: Record<string, object> = {
  'PUT /api/workflows/{id}': { name: 'renamed' },
  'PUT /api/webhooks/{id}': { name: 'renamed' },
  'POST /api/v1/workflows/{workflowId}/runs': { variables: {} },
  'PUT /api/channels/{channelId}': { name: 'renamed' },
  'POST /api/v1/callbacks/{callbackId}': { status: 'success' },
  'POST /api/workflows/{id}/schedules': { expression: 'rate(1 hour)' },
  'PUT /api/schedules/{scheduleId}': { name: 'renamed' },
};
const MALFORMED = [
  'x',
  'wh_short',
  'WH_01JABCDEFGHJKMNPQRSTVWXYZ0',
  '../etc/passwd',
  'a#b',
  `${'z'.repeat(300)}`,
  '%00',
  'ex_0123456789abcdefghjkmnpqr!',
];
/** A well-formed id of the kind the parameter names (ULID-shaped, never issued). */
const unknownFor = (param: string) => {
  const prefix = {
    webhookId: 'wh',
    workflowId: 'wf',
    executionId: 'ex',
    approvalId: 'ap',
    artifactId: 'ar',
    channelId: 'ch',
    callbackId: 'cb',
    scheduleId: 'sch',
  }[param];
  return prefix ? `${prefix}_0000000000000000000000000z` : '0000000000000000000000000z';
};

const credentials = (r: Route): Record<string, string> =>
  r.auth.kind === 'session'
    ? { authorization: `Bearer ${session}` }
    : r.auth.kind === 'apiKey'
      ? { authorization: `Bearer ${a.adminKey.token}` }
      : r.auth.kind === 'callback'
        ? // A callback token of the account (of no callback it has).
          { authorization: `Bearer ${mintToken('dyc', a.account.accountId.slice(4))}` }
        : {};

async function call(r: Route, params: Record<string, string>) {
  const load = modules[`../../functions/${r.handler}.ts`] as () => Promise<unknown>;
  const { handler } = (await load()) as { handler: Handler };
  const key = `${r.method} ${r.path}`;
  const event = apiEvent({
    method: r.method,
    path: r.path,
    params,
    headers: credentials(r),
    body: BODIES[key] ?? (r.body ? {} : undefined),
  });
  // A console page: the browser's session cookie, and a POST's form with its CSRF token (the 404 page comes first).
  if (r.auth.kind === 'console') {
    event.cookies = [`flowgate_session=${session}`];
    if (r.method === 'POST') {
      event.headers['content-type'] = 'application/x-www-form-urlencoded';
      event.body = new URLSearchParams({ csrf: csrfToken(session) }).toString();
    }
  }
  const res = await invoke(handler, event);
  return { status: res.status, code: res.json?.code };
}

const modules = (import.meta as unknown as { glob: (p: string) => Record<string, () => Promise<unknown>> }).glob(
  '../../functions/http/**/*.ts',
);
const withIds = (routes as readonly Route[]).filter((r) => r.params && /\{(\w*[iI]d)\}/.test(r.path));

describe('malformed ids in paths', () => {
  it('covers every route with an id in its path', () => {
    expect(withIds.length).toBeGreaterThanOrEqual(20);
  });

  it.each(withIds.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: a malformed id answers as an unknown one', async (_, r) => {
    const names = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const unknown = Object.fromEntries(names.map((n) => [n, n === 'decision' ? 'approve' : unknownFor(n)]));
    const expected = await call(r, unknown);
    // A reviewer's link carries its credential, the token naming its approval, which is checked first (403 here, without one).
    expect(expected.status).toBe(r.path.startsWith('/api/reviews/') ? 403 : 404);
    for (const name of names.filter((n) => n !== 'decision'))
      for (const bad of MALFORMED) expect(await call(r, { ...unknown, [name]: bad }), `${name}=${bad}`).toEqual(expected);
  });
});

describe('malformed ids in bodies and queries', () => {
  const post = (handler: Handler, body: object, path = '/') =>
    invoke(handler, apiEvent({ method: 'POST', path, headers: { authorization: `Bearer ${session}` }, body }));

  it('a webhook for a malformed workflowId is 404 WORKFLOW_NOT_FOUND, as for an unknown one', async () => {
    for (const id of ['wf_0000000000000000000000000z', 'nope', '../x', 'wf#1']) {
      const res = await post(createWebhookRoute, { workflowId: id, name: 'w' });
      expect({ status: res.status, code: res.json.code }, id).toEqual({ status: 404, code: 'WORKFLOW_NOT_FOUND' });
    }
    // Another field's problem is still reported first, as for an unknown id.
    const both = await post(createWebhookRoute, { workflowId: 'nope', name: '' });
    expect({ status: both.status, code: both.json.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('binding a malformed apiKeyId is 400 INVALID_API_KEY_BINDING, on create and update, as for an unknown key', async () => {
    for (const apiKeyId of ['0000000000000000000000000z', 'not-a-key', 'dyk_abc', '']) {
      const res = await post(createWebhookRoute, { workflowId, name: 'w', apiKeyId });
      expect({ status: res.status, code: res.json.code }, apiKeyId).toEqual({ status: 400, code: 'INVALID_API_KEY_BINDING' });
    }
    const actor = { kind: 'session', accountId: a.account.accountId, userId: a.admin.userId, role: 'admin', sessionId: '' } as const;
    const hook = await createWebhook(actor, CreateWebhookBody.parse({ workflowId, name: 'bound later', authMode: 'open' }));
    const res = await invoke(
      updateWebhookRoute,
      apiEvent({ method: 'PUT', params: { id: hook.webhookId }, headers: { authorization: `Bearer ${session}` }, body: { apiKeyId: 'x' } }),
    );
    expect({ status: res.status, code: res.json.code }).toEqual({ status: 400, code: 'INVALID_API_KEY_BINDING' });
  });

  it('a malformed editor is 400 INVALID_EDITORS, as for an unknown user', async () => {
    const definition = { steps: [{ id: 'mark', type: 'set', values: { marked: true } }] };
    for (const editor of ['usr_0000000000000000000000000z', 'bob', '']) {
      const res = await post(createWorkflowRoute, { name: 'e', definition, editors: [editor] });
      expect({ status: res.status, code: res.json.code }, String(editor)).toEqual({ status: 400, code: 'INVALID_EDITORS' });
    }
  });

  it('filtering runs by a malformed workflowId gives the empty page an unknown one gives', async () => {
    for (const id of ['wf_0000000000000000000000000z', 'nope', 'a#b']) {
      const res = await invoke(
        listRuns,
        apiEvent({
          method: 'GET',
          path: '/api/v1/executions',
          query: { workflowId: id },
          headers: { authorization: `Bearer ${a.adminKey.token}` },
        }),
      );
      expect({ status: res.status, items: res.json.items }, id).toEqual({ status: 200, items: [] });
    }
  });
});
