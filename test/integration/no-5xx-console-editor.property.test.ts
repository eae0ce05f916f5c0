import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler as createPage } from '../../functions/http/console/workflows/create.ts';
import { handler as savePage } from '../../functions/http/console/workflows/save.ts';
import { handler as validatePage } from '../../functions/http/console/workflows/validate.ts';
import { handler as versionsPage } from '../../functions/http/console/workflows/versions.ts';
import { handler as versionHandler } from '../../functions/http/workflows/version.ts';
import { handler as versionsHandler } from '../../functions/http/workflows/versions.ts';
import { csrfToken } from '../../shared/console/csrf.ts';
import { getWorkflow } from '../../shared/db/entities/workflow.ts';
import { createWorkflow } from '../../shared/domain/workflows.ts';
import { WorkflowDefinition } from '../../shared/engine/definition.ts';
import { givenAccount } from '../support/fixtures.ts';
import { apiEvent, bearer, lambdaContext } from '../support/http.ts';
import { check, deeplyNested, sourceIp, text } from '../support/properties.ts';
import { sessionOf } from '../support/sessions.ts';

/**
 * The editor's routes take a definition as text, from anyone: whatever JSON text (valid or broken,
 * deep, huge, of any shape) and whatever name, the validate route answers a fragment and the save
 * routes a page or a redirect, never a 5xx; a refused draft saves nothing. The versions API and page
 * take any query and path too.
 */

/** A path segment as a browser sends it (a lone surrogate cannot be sent: it is replaced). */
const encoded = (s: string) => encodeURIComponent(s.toWellFormed());

type Handler = (e: never, c: never) => Promise<{ statusCode: number; headers?: Record<string, string>; body?: string }>;

let session: string;
let token: string;
let workflowId: string;
let accountId: string;

beforeAll(async () => {
  const a = await givenAccount();
  accountId = a.account.accountId;
  session = await sessionOf(a.admin.email);
  token = session;
  const w = await createWorkflow(
    { accountId, userId: a.admin.userId, role: 'admin' },
    {
      name: 'Target',
      definition: WorkflowDefinition.parse({ steps: [{ id: 's', type: 'set', values: {} }] }),
      recovery: false,
      editors: [],
    },
  );
  workflowId = w.workflowId;
}, 60_000);

/** A step as an editor might type it: known and unknown types, fields of any JSON. */
const step = fc.record(
  {
    id: fc.oneof(fc.constantFrom('a', 'b', 'approve', '$end'), fc.string({ maxLength: 10 })),
    type: fc.oneof(fc.constantFrom('set', 'switch', 'for_each', 'http_request', 'manual_approval', 'fail', 'delay'), fc.string()),
    values: fc.jsonValue({ maxDepth: 2 }),
    next: fc.constantFrom('a', 'b', '$end', 'nowhere'),
    cases: fc.array(fc.record({ when: fc.string(), next: fc.string() }), { maxLength: 2 }),
    steps: fc.array(fc.record({ id: fc.string(), type: fc.string() }), { maxLength: 2 }),
    reviewers: fc.array(fc.string(), { maxLength: 2 }),
    notify: fc.array(fc.record({ channel: fc.string() }), { maxLength: 2 }),
    url: fc.oneof(fc.webUrl(), fc.string()),
  },
  { requiredKeys: ['id', 'type'] },
);
const definitionLike = fc.record(
  { steps: fc.array(step, { maxLength: 4 }), variables: fc.jsonValue({ maxDepth: 2 }), output: fc.jsonValue({ maxDepth: 1 }) },
  { requiredKeys: [] },
);

/** Definition text: well-formed or cut short, pretty or not, any JSON, deep nesting, random text. */
const definitionText = fc.oneof(
  definitionLike.map((d) => JSON.stringify(d, null, 2)),
  fc.tuple(definitionLike, fc.nat()).map(([d, n]) => {
    const s = JSON.stringify(d, null, 2);
    return s.slice(0, n % (s.length + 1));
  }),
  fc.json(),
  deeplyNested,
  text,
  fc.constantFrom('', ' ', 'null', '[]', '"steps"', '{"steps":', '{"steps":[]}\n//', '{"steps":[],}', '\ufeff{}'),
);

const form = (fields: Record<string, string>) => new URLSearchParams({ csrf: csrfToken(session), ...fields }).toString();

async function postForm(handler: Handler, path: string, body: string, ip: string, params?: Record<string, string>) {
  const event = apiEvent({
    method: 'POST',
    path,
    headers: { 'sec-fetch-site': 'same-origin', 'content-type': 'application/x-www-form-urlencoded' },
    body,
    sourceIp: ip,
    ...(params ? { params } : {}),
  });
  event.cookies = [`flowgate_session=${session}`];
  return handler(event as never, lambdaContext());
}

const drafts = fc.record({
  name: fc.oneof(fc.constantFrom('Draft', ''), text),
  definition: definitionText,
  workflowId: fc.option(fc.oneof(fc.constant('own'), text), { nil: undefined }),
  version: fc.option(fc.oneof(fc.constantFrom('1', '0', '-1', '1e9', '99999999999999999999'), text), { nil: undefined }),
  ip: sourceIp,
});
const fieldsOf = (d: { name: string; definition: string; workflowId?: string | undefined; version?: string | undefined }) => ({
  name: d.name,
  definition: d.definition,
  ...(d.workflowId !== undefined ? { workflowId: d.workflowId === 'own' ? workflowId : d.workflowId } : {}),
  ...(d.version !== undefined ? { version: d.version } : {}),
});

describe('no draft makes an editor route answer 5xx', () => {
  it('POST /console/workflows/validate: a fragment (200) or a 4xx page', async () => {
    await fc.assert(
      fc.asyncProperty(drafts, async (d) => {
        const res = await postForm(validatePage as Handler, '/console/workflows/validate', form(fieldsOf(d)), d.ip);
        const what = `${JSON.stringify(d).slice(0, 400)} -> ${res.statusCode}`;
        expect(res.statusCode, what).toBeLessThan(500);
        expect([200, 400, 404, 413], what).toContain(res.statusCode);
        expect(res.headers?.['content-type'], what).toBe('text/html; charset=utf-8');
      }),
      { numRuns: 150 },
    );
  });

  it('POST /console/workflows/new and /{id}/edit: the editor again (4xx) or a redirect, a refused draft saving nothing', async () => {
    await fc.assert(
      fc.asyncProperty(drafts, fc.boolean(), async (d, edit) => {
        const before = (await getWorkflow(accountId, workflowId))?.version;
        const res = edit
          ? await postForm(savePage as Handler, `/console/workflows/${workflowId}/edit`, form(fieldsOf(d)), d.ip, { workflowId })
          : await postForm(createPage as Handler, '/console/workflows/new', form(fieldsOf(d)), d.ip);
        const what = `${edit ? 'edit' : 'new'} ${JSON.stringify(d).slice(0, 400)} -> ${res.statusCode}`;
        expect(res.statusCode, what).toBeLessThan(500);
        expect([303, 400, 403, 409, 413], what).toContain(res.statusCode);
        const after = (await getWorkflow(accountId, workflowId))?.version;
        if (res.statusCode !== 303 || !edit) expect(after, what).toBe(before);
      }),
      { numRuns: 100 },
    );
  });
});

describe('the versions API and page take any path and query', () => {
  const ids = fc.oneof(fc.constant('own'), text, fc.stringMatching(/^wf_[0-9a-z]{26}$/));
  const at = (id: string) => (id === 'own' ? workflowId : id);

  it('GET /api/workflows/{id}/versions and /versions/{version}', async () => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        fc.oneof(fc.constantFrom('1', '2', '0', '-1', '1.5', '1e3', '99999999999'), text),
        fc.dictionary(fc.constantFrom('limit', 'cursor', 'x'), text, { maxKeys: 3 }),
        sourceIp,
        async (id, version, query, ip) => {
          const req = { headers: bearer(token), query, params: { id: at(id) }, body: { isBase64Encoded: false }, sourceIp: ip };
          await check(versionsHandler as never, 'GET', `/api/workflows/${encoded(at(id))}/versions`, req, [200, 400, 404]);
          await check(
            versionHandler as never,
            'GET',
            `/api/workflows/${encoded(at(id))}/versions/${encoded(version)}`,
            { ...req, query: undefined, params: { id: at(id), version } },
            [200, 404],
          );
        },
      ),
      { numRuns: 80 },
    );
  });

  it('GET /console/workflows/{id}/versions with any from, to and cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        ids,
        fc.dictionary(fc.constantFrom('from', 'to', 'cursor', 'x'), fc.oneof(fc.constantFrom('1', '2', '0', '5'), text), { maxKeys: 4 }),
        sourceIp,
        async (id, query, ip) => {
          const event = apiEvent({
            path: `/console/workflows/${encoded(at(id))}/versions`,
            params: { workflowId: at(id) },
            query,
            sourceIp: ip,
          });
          event.cookies = [`flowgate_session=${session}`];
          const res = await (versionsPage as Handler)(event as never, lambdaContext());
          const what = `${id} ${JSON.stringify(query)} -> ${res.statusCode}`;
          expect([200, 400, 404], what).toContain(res.statusCode);
        },
      ),
      { numRuns: 60 },
    );
  });
});
