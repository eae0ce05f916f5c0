import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createPage } from '../../functions/http/console/workflows/create.ts';
import { handler as editPage } from '../../functions/http/console/workflows/edit.ts';
import { handler as savePage } from '../../functions/http/console/workflows/save.ts';
import { handler as workflowPage } from '../../functions/http/console/workflows/workflow.ts';
import { applyWorkflowFile } from '../../shared/domain/workflow-code.ts';
import { handler as validatePage } from '../../functions/http/console/workflows/validate.ts';
import { handler as versionsPage } from '../../functions/http/console/workflows/versions.ts';
import { handler as restorePage } from '../../functions/http/console/workflows/restore.ts';
import { handler as versionHandler } from '../../functions/http/workflows/version.ts';
import { handler as versionsHandler } from '../../functions/http/workflows/versions.ts';
import { handler as updateHandler } from '../../functions/http/workflows/update.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { getWorkflow, getWorkflowVersion } from '../../shared/db/entities/workflow.ts';
import { createWorkflow, updateWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { EXAMPLE_SECRET } from '../support/definitions.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, expectProblem, invoke, lambdaContext } from '../support/http.ts';
import { freshIp, sessionOf } from '../support/sessions.ts';

/**
 * The workflow editor's routes through their handlers on the emulators: the versions API (author and
 * time of each version, newest first, cursor pages, one version's definition, another account's ids),
 * the validate route (each error's path as the API names it and its line in the draft; a syntax error's
 * line and column; nothing saved), the save routes (a refused draft saves nothing; a concurrent save is
 * the API's conflict, the draft kept) and a restore.
 */

type Result = { statusCode: number; headers?: Record<string, string>; body?: string };
type Handler = (e: never, c: never) => Promise<unknown>;

const post = async (handler: Handler, path: string, cookie: string, form: Record<string, string>, params?: Record<string, string>) => {
  const event = apiEvent({
    method: 'POST',
    path,
    headers: { 'sec-fetch-site': 'same-origin', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrfToken(cookie), ...form }).toString(),
    sourceIp: freshIp(),
    ...(params ? { params } : {}),
  });
  event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
const get = async (handler: Handler, path: string, cookie: string, params: Record<string, string>, query?: Record<string, string>) => {
  const event = apiEvent({ path, params, sourceIp: freshIp(), ...(query ? { query } : {}) });
  event.cookies = [`flowgate_session=${cookie}`];
  return (await handler(event as never, lambdaContext())) as Result;
};
/** The text of an HTML answer, tags dropped and entities of the escaper decoded (enough to read it). */
const text = (html = '') =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

const ONE = { steps: [{ id: 'hello', type: 'set', values: { greeting: 'Hello' } }] };
const TWO = { steps: [{ id: 'hello', type: 'set', values: { greeting: 'Hello again' } }] };
const pretty = (v: unknown) => JSON.stringify(v, null, 2);

let a: Awaited<ReturnType<typeof givenAccount>>;
let other: Awaited<ReturnType<typeof givenAccount>>;
let admin: string;
let member: string;
let otherAdmin: string;
const adminActor = () => ({ accountId: a.account.accountId, userId: a.admin.userId, role: 'admin' as const });

beforeAll(async () => {
  [a, other] = await Promise.all([givenAccount(), givenAccount()]);
  [admin, member, otherAdmin] = await Promise.all([sessionOf(a.admin.email), sessionOf(a.member.email), sessionOf(other.admin.email)]);
}, 60_000);

describe('versions: author and time, and the API', () => {
  it('each save records who saved it and when; the list is newest first, cursor-paged, without definitions', async () => {
    const w = await createWorkflow(
      adminActor(),
      { name: 'Versions', definition: WorkflowDefinition.parse(ONE), recovery: false, editors: [] },
      1_000,
    );
    // The member as editor saves version 2.
    await updateWorkflow(adminActor(), w.workflowId, { editors: [a.member.userId] }, 2_000);
    await updateWorkflow(
      { accountId: a.account.accountId, userId: a.member.userId, role: 'member' },
      w.workflowId,
      { definition: WorkflowDefinition.parse(TWO) },
      3_000,
    );
    expect(await getWorkflowVersion(a.account.accountId, w.workflowId, 1)).toMatchObject({ createdAt: 1_000, createdBy: a.admin.userId });
    expect(await getWorkflowVersion(a.account.accountId, w.workflowId, 3)).toMatchObject({ createdAt: 3_000, createdBy: a.member.userId });

    const page1 = await invoke(
      versionsHandler,
      apiEvent({
        path: `/api/workflows/${w.workflowId}/versions`,
        headers: bearer(member),
        params: { id: w.workflowId },
        query: { limit: '2' },
      }),
    );
    expect(page1.status).toBe(200);
    expect(page1.json.items).toEqual([
      { version: 3, createdAt: 3_000, createdBy: a.member.userId },
      { version: 2, createdAt: 2_000, createdBy: a.admin.userId },
    ]);
    expect(page1.json.nextCursor).toEqual(expect.any(String));
    const page2 = await invoke(
      versionsHandler,
      apiEvent({
        path: `/api/workflows/${w.workflowId}/versions`,
        headers: bearer(member),
        params: { id: w.workflowId },
        query: { limit: '2', cursor: page1.json.nextCursor },
      }),
    );
    expect(page2.json).toEqual({ items: [{ version: 1, createdAt: 1_000, createdBy: a.admin.userId }], nextCursor: null });

    const one = await invoke(
      versionHandler,
      apiEvent({ path: `/api/workflows/${w.workflowId}/versions/1`, headers: bearer(admin), params: { id: w.workflowId, version: '1' } }),
    );
    expect(one.status).toBe(200);
    expect(one.json).toMatchObject({ version: 1, createdAt: 1_000, createdBy: a.admin.userId, recovery: false });
    expect(one.json.definition.steps[0].values).toEqual({ greeting: 'Hello' });

    const missing = await invoke(
      versionHandler,
      apiEvent({ path: `/api/workflows/${w.workflowId}/versions/9`, headers: bearer(admin), params: { id: w.workflowId, version: '9' } }),
    );
    expectProblem(missing, 404, 'WORKFLOW_VERSION_NOT_FOUND');
    for (const version of ['0', 'abc', '1.5'])
      expectProblem(
        await invoke(
          versionHandler,
          apiEvent({
            path: `/api/workflows/${w.workflowId}/versions/${version}`,
            headers: bearer(admin),
            params: { id: w.workflowId, version },
          }),
        ),
        404,
        'WORKFLOW_VERSION_NOT_FOUND',
      );
    // Another account's workflow: the same 404 as an unknown one, for the list and a version.
    const theirs = await invoke(
      versionsHandler,
      apiEvent({ path: `/api/workflows/${w.workflowId}/versions`, headers: bearer(otherAdmin), params: { id: w.workflowId } }),
    );
    expectProblem(theirs, 404, 'WORKFLOW_NOT_FOUND');
    const theirVersion = await invoke(
      versionHandler,
      apiEvent({
        path: `/api/workflows/${w.workflowId}/versions/1`,
        headers: bearer(otherAdmin),
        params: { id: w.workflowId, version: '1' },
      }),
    );
    expectProblem(theirVersion, 404, 'WORKFLOW_NOT_FOUND');
  });

  it('the API update records its caller as the author', async () => {
    const w = await createWorkflow(adminActor(), {
      name: 'Via API',
      definition: WorkflowDefinition.parse(ONE),
      recovery: false,
      editors: [],
    });
    const res = await invoke(
      updateHandler,
      apiEvent({
        method: 'PUT',
        path: `/api/workflows/${w.workflowId}`,
        headers: bearer(admin),
        params: { id: w.workflowId },
        body: { definition: TWO },
      }),
    );
    expect(res.status).toBe(200);
    const v2 = await getWorkflowVersion(a.account.accountId, w.workflowId, 2);
    expect(v2?.createdBy).toBe(a.admin.userId);
    expect(v2?.createdAt).toBe(res.json.updatedAt);
  });
});

describe('the validate route: the server schema, paths and lines, nothing saved', () => {
  it('names each error by its API path, in plain words, with its line (a "Line N" link to the definition) and column', async () => {
    const draft = pretty({
      steps: [
        { id: 'a', type: 'set', values: {} },
        { id: 'b', type: 'nope' },
      ],
    });
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: draft });
    expect(res.statusCode).toBe(200);
    const body = text(res.body);
    // "type": "nope" is on line 10 of the pretty-printed draft.
    const line = draft.split('\n').findIndex((l) => l.includes('"nope"')) + 1;
    expect(line).toBeGreaterThan(1);
    expect(body).toContain(
      `Line ${line}, column 7 — steps.1.type: unknown step type 'nope': use one of 'set', 'http_request', 'manual_approval'`,
    );
    expect(res.body).toContain(`<a href="#wf-definition" class="line-link" data-line="${line}" data-column="7">Line ${line}</a>`);
    expect(body).toContain('1 error in the definition');
    // The page keeps the graph it shows (htmx: hx-preserve), labelled as the last valid draft's.
    expect(body).toContain('Graph of the last valid draft');
    expect(res.body).toMatch(/<div id="draft-graph" class="graph-wrap" hx-preserve="true">/);
    expect(res.body).not.toContain('<html');
  });

  it('hostile text in a draft is shown in the wording as text, never as markup', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const draft = pretty({
      steps: [
        { id: 'a', type: hostile, values: {} },
        { id: 'b', type: 'set', values: {}, [hostile]: 1 },
      ],
    });
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: draft });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('<img');
    expect(text(res.body)).toContain(`steps.0.type: unknown step type '${hostile}': use one of 'set'`);
    expect(text(res.body)).toContain(`unknown property '${hostile}'`);
  });

  it('a missing field is named at its path, on the line of the object that lacks it', async () => {
    const draft = pretty({
      steps: [
        { id: 'a', type: 'set', values: {} },
        { type: 'set', values: {} },
      ],
    });
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: draft });
    const line = draft.split('\n').findIndex((l, i, all) => l.trim() === '{' && all[i + 1]?.includes('"type"')) + 1;
    expect(text(res.body)).toContain(`Line ${line}, column 5 — steps.1.id: is missing: it must be a string`);
  });

  it('a JSON syntax error is named with its line and column', async () => {
    const draft = '{\n  "steps": [\n    { "id": "a", "type": "set" values: {} }\n  ]\n}';
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: draft });
    expect(text(res.body)).toContain('Line 3, column 32 — (definition): JSON syntax error: invalid symbol');
  });

  it('a valid draft: no errors, and its graph drawn from the draft', async () => {
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: pretty(TWO) });
    expect(text(res.body)).toContain('No errors: the definition is valid');
    expect(res.body).toContain('aria-label="Graph of the draft"');
    expect(res.body).toContain('>hello<');
  });

  it("the save's own checks too (a channel that does not exist), with the path and line", async () => {
    const def = {
      steps: [{ id: 'ok', type: 'manual_approval', title: 'Go?', reviewers: ['role:admin'], notify: [{ channel: 'nowhere' }] }],
    };
    const res = await post(validatePage, '/console/workflows/validate', admin, { name: 'Draft', definition: pretty(def) });
    expect(text(res.body)).toMatch(/Line \d+, column \d+ — steps\.0\.notify\.0\.channel: no channel named nowhere/);
  });

  it("another account's workflow id: 404; a malformed one: 404", async () => {
    const w = await createWorkflow(adminActor(), { name: 'Mine', definition: WorkflowDefinition.parse(ONE), recovery: false, editors: [] });
    expect(
      (await post(validatePage, '/console/workflows/validate', otherAdmin, { workflowId: w.workflowId, definition: '{}' })).statusCode,
    ).toBe(404);
    expect(
      (await post(validatePage, '/console/workflows/validate', admin, { workflowId: 'x'.repeat(5000), definition: '{}' })).statusCode,
    ).toBe(404);
  });
});

describe('the save routes', () => {
  it('a refused draft saves nothing and comes back with the draft and its errors; a valid one is version 1', async () => {
    const name = `Editor ${Date.now()}`;
    const bad = pretty({ steps: [{ id: 'a', type: 'nope' }] });
    const refused = await post(createPage, '/console/workflows/new', admin, { name, definition: bad });
    expect(refused.statusCode).toBe(400);
    expect(text(refused.body)).toContain("Line 5, column 7 — steps.0.type: unknown step type 'nope'");
    // The draft is kept, as typed.
    expect(text(refused.body)).toContain('"type": "nope"');
    expect(refused.body).toMatch(/id="draft-errors"[^>]*autofocus/);

    const emptyName = await post(createPage, '/console/workflows/new', admin, { name: '  ', definition: pretty(ONE) });
    expect(emptyName.statusCode).toBe(400);
    expect(emptyName.body).toMatch(/id="wf-name"[^>]*aria-invalid="true"/);

    const saved = await post(createPage, '/console/workflows/new', admin, { name, definition: pretty(ONE) });
    expect(saved.statusCode).toBe(303);
    const id = /\/console\/workflows\/(wf_\w+)$/.exec(saved.headers?.location ?? '')?.[1] as string;
    const w = await getWorkflow(a.account.accountId, id);
    expect(w).toMatchObject({ name, version: 1, ownerId: a.admin.userId });
  });

  it('a save expects the version it was opened on: a concurrent save is the 409, the draft kept, nothing saved', async () => {
    const w = await createWorkflow(adminActor(), { name: 'Race', definition: WorkflowDefinition.parse(ONE), recovery: false, editors: [] });
    await updateWorkflow(adminActor(), w.workflowId, { definition: WorkflowDefinition.parse(TWO) });
    const draft = pretty({ steps: [{ id: 'mine', type: 'set', values: {} }] });
    const res = await post(
      savePage,
      `/console/workflows/${w.workflowId}/edit`,
      admin,
      { name: 'Race', definition: draft, version: '1' },
      { workflowId: w.workflowId },
    );
    expect(res.statusCode).toBe(409);
    expect(text(res.body)).toContain('The workflow was changed or deleted meanwhile');
    expect(text(res.body)).toContain('"id": "mine"');
    expect((await getWorkflow(a.account.accountId, w.workflowId))?.version).toBe(2);
    // The page now expects version 2: saving again replaces it, knowingly.
    expect(res.body).toContain('name="version" value="2"');
    const again = await post(
      savePage,
      `/console/workflows/${w.workflowId}/edit`,
      admin,
      { name: 'Race', definition: draft, version: '2' },
      { workflowId: w.workflowId },
    );
    expect(again.statusCode).toBe(303);
    expect((await getWorkflow(a.account.accountId, w.workflowId))?.version).toBe(3);
  });

  it('the editor shows secrets masked; saving the masks keeps the stored secrets', async () => {
    const token = 'Bearer sk_live_0123456789abcdefXYZ1';
    const def = {
      steps: [{ id: 'call', type: 'http_request', method: 'POST', url: 'https://api.example.com/hook', headers: { authorization: token } }],
      notifications: [{ url: 'https://hooks.example.com/in', events: ['execution.succeeded'], secret: EXAMPLE_SECRET }],
    };
    const w = await createWorkflow(adminActor(), {
      name: 'Secretive',
      definition: WorkflowDefinition.parse(def),
      recovery: false,
      editors: [],
    });
    const edit = await get(editPage, `/console/workflows/${w.workflowId}/edit`, admin, { workflowId: w.workflowId });
    expect(edit.statusCode).toBe(200);
    expect(edit.body).not.toContain('0123456789abcdef');
    expect(edit.body).not.toContain(EXAMPLE_SECRET);
    const shown = /<textarea[^>]*>([\s\S]*?)<\/textarea>/.exec(edit.body ?? '')?.[1] as string;
    const draft = text(shown);
    expect(draft).toContain('••••');
    // The live check takes the masks too (against the stored definition).
    expect(
      text(
        (await post(validatePage, '/console/workflows/validate', admin, { workflowId: w.workflowId, name: 'Secretive', definition: draft }))
          .body,
      ),
    ).toContain('No errors');
    const saved = await post(
      savePage,
      `/console/workflows/${w.workflowId}/edit`,
      admin,
      { name: 'Secretive', definition: draft, version: '1' },
      { workflowId: w.workflowId },
    );
    expect(saved.statusCode).toBe(303);
    const now = await getWorkflow(a.account.accountId, w.workflowId);
    expect(now?.version).toBe(2);
    expect(JSON.stringify(now?.definition)).toContain(token);
    expect(JSON.stringify(now?.definition)).toContain(EXAMPLE_SECRET);
  });

  it('a member who may not edit: 403 and nothing saved; another account: 404', async () => {
    const w = await createWorkflow(adminActor(), {
      name: 'Guarded',
      definition: WorkflowDefinition.parse(ONE),
      recovery: false,
      editors: [],
    });
    const form = { name: 'Guarded', definition: pretty(TWO), version: '1' };
    expect((await post(savePage, `/console/workflows/${w.workflowId}/edit`, member, form, { workflowId: w.workflowId })).statusCode).toBe(
      403,
    );
    expect(
      (await post(savePage, `/console/workflows/${w.workflowId}/edit`, otherAdmin, form, { workflowId: w.workflowId })).statusCode,
    ).toBe(404);
    expect((await getWorkflow(a.account.accountId, w.workflowId))?.version).toBe(1);
  });
});

describe('versions page and restore', () => {
  it('the diff between two versions marks the changed lines; a restore is a new version with the old content', async () => {
    const w = await createWorkflow(adminActor(), {
      name: 'Restore me',
      definition: WorkflowDefinition.parse(ONE),
      recovery: false,
      editors: [],
    });
    await updateWorkflow(adminActor(), w.workflowId, { definition: WorkflowDefinition.parse(TWO) });
    const page = await get(
      versionsPage,
      `/console/workflows/${w.workflowId}/versions`,
      admin,
      { workflowId: w.workflowId },
      { from: '1', to: '2' },
    );
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<del class="diff-del">− +&quot;greeting&quot;: &quot;Hello&quot;\n<\/del>/);
    expect(page.body).toMatch(/<ins class="diff-add">\+ +&quot;greeting&quot;: &quot;Hello again&quot;\n<\/ins>/);
    expect(text(page.body)).toContain('1 line added (+), 1 line removed (−).');
    expect(text(page.body)).toContain(a.admin.email);

    const restored = await post(
      restorePage,
      `/console/workflows/${w.workflowId}/versions/1/restore`,
      admin,
      { expected: '2' },
      { workflowId: w.workflowId, version: '1' },
    );
    expect(restored.statusCode).toBe(303);
    const now = await getWorkflow(a.account.accountId, w.workflowId);
    expect(now?.version).toBe(3);
    expect(now?.definition).toEqual((await getWorkflowVersion(a.account.accountId, w.workflowId, 1))?.definition);
    // A stale confirmation (it showed version 2): 409, nothing saved.
    const stale = await post(
      restorePage,
      `/console/workflows/${w.workflowId}/versions/2/restore`,
      admin,
      { expected: '2' },
      { workflowId: w.workflowId, version: '2' },
    );
    expect(stale.statusCode).toBe(409);
    expect((await getWorkflow(a.account.accountId, w.workflowId))?.version).toBe(3);
    // A member without edit rights: 403.
    const refused = await post(
      restorePage,
      `/console/workflows/${w.workflowId}/versions/2/restore`,
      member,
      { expected: '3' },
      { workflowId: w.workflowId, version: '2' },
    );
    expect(refused.statusCode).toBe(403);
  });
});

describe('a workflow managed by code (docs/workflows-as-code.md)', () => {
  it('shows where it comes from, and saves an edit only when the person confirms it drifts from its file', async () => {
    const applied = await applyWorkflowFile(
      adminActor(),
      `drift-${Date.now()}`,
      { name: 'from code', definition: WorkflowDefinition.parse(ONE), recovery: false, editors: [], origin: 'ops-repo/workflows' },
      { dryRun: false },
    );
    const workflowId = applied.workflowId as string;
    expect(applied.action).toBe('create');
    const shown = await get(workflowPage, `/console/workflows/${workflowId}`, admin, { workflowId });
    expect(text(shown.body)).toContain('Managed by code');
    expect(text(shown.body)).toContain('ops-repo/workflows');
    const editor = await get(editPage, `/console/workflows/${workflowId}/edit`, admin, { workflowId });
    expect(text(editor.body)).toContain('An edit here drifts from that file');
    expect(editor.body).toMatch(/<input type="checkbox" name="drift" value="yes" required/);
    const draft = { name: 'from code', definition: pretty(TWO), version: '1' };
    const unconfirmed = await post(savePage, `/console/workflows/${workflowId}/edit`, admin, draft, { workflowId });
    expect(unconfirmed.statusCode).toBe(400);
    expect(text(unconfirmed.body)).toContain('confirm that this edit drifts from its file');
    expect((await getWorkflow(a.account.accountId, workflowId))?.version).toBe(1);
    const confirmed = await post(savePage, `/console/workflows/${workflowId}/edit`, admin, { ...draft, drift: 'yes' }, { workflowId });
    expect(confirmed.statusCode).toBe(303);
    expect((await getWorkflow(a.account.accountId, workflowId))?.version).toBe(2);
    // A workflow made in the console asks for nothing of the kind.
    const plain = await createWorkflow(adminActor(), {
      name: 'plain',
      definition: WorkflowDefinition.parse(ONE),
      recovery: false,
      editors: [],
    });
    const plainEditor = await get(editPage, `/console/workflows/${plain.workflowId}/edit`, admin, { workflowId: plain.workflowId });
    expect(text(plainEditor.body)).not.toContain('Managed by code');
  });
});
