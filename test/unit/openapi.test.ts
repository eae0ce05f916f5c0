import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { handler as openapiHandler } from '../../functions/http/v1/openapi.ts';
import { routes } from '../../functions/routes.ts';
import { openApiDocument } from '../../shared/http/openapi.ts';
import { isConsolePage, type Route } from '../../shared/http/route.ts';
import { checkContract } from '../support/contract.ts';
import { apiEvent, invoke } from '../support/http.ts';

type Operation = {
  operationId: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required: boolean; schema: object }[];
  requestBody?: { required: boolean; content: Record<string, { schema: object }> };
  security?: Record<string, string[]>[];
  responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }>;
};

const doc = openApiDocument(routes);
/** The API's routes: the console's pages are in the route table, not in the API's document. */
const all = (routes as readonly Route[]).filter((r) => !isConsolePage(r));
const op = (r: Route) => (doc.paths[r.path] as Record<string, Operation> | undefined)?.[r.method.toLowerCase()];
/** Resolve a local `#/...` JSON pointer against the whole document; undefined when it points nowhere. */
const resolve = (root: unknown, ref: string): unknown => {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!at || typeof at !== 'object' || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
};
/** Follow `$ref`s (from the document root) until a schema that is not a bare reference. */
const deref = (root: unknown, schema: unknown, hops = 0): unknown => {
  const ref = (schema as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' && hops < 10 ? deref(root, resolve(root, ref), hops + 1) : schema;
};
const operations = () => Object.values(doc.paths).flatMap((methods) => Object.values(methods as Record<string, Operation>));

describe('openApiDocument', () => {
  it('is an OpenAPI 3.1.0 document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toEqual(expect.any(String));
    expect(doc.info.version).toEqual(expect.any(String));
    expect(() => JSON.stringify(doc)).not.toThrow();
  });

  it('has only $refs that resolve from the document root (OpenAPI resolves fragments against the document)', () => {
    const root = JSON.parse(JSON.stringify(doc)) as unknown;
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string') refs.push(x);
          else walk(x);
        }
      }
    };
    walk(root);
    expect(refs.length).toBeGreaterThan(0);
    const dangling = [...new Set(refs)].filter((ref) => resolve(root, ref) === undefined);
    expect(dangling).toEqual([]);
  });

  it('documents the Problem schema with the fields of every error body', () => {
    const problem = deref(JSON.parse(JSON.stringify(doc)), { $ref: '#/components/schemas/Problem' }) as {
      type?: string;
      required?: string[];
      properties?: object;
    };
    expect(problem.type).toBe('object');
    expect(Object.keys(problem.properties ?? {})).toEqual(
      expect.arrayContaining(['type', 'title', 'status', 'code', 'detail', 'requestId', 'errors']),
    );
    expect(problem.required).toEqual(expect.arrayContaining(['type', 'title', 'status', 'code', 'requestId']));
  });

  it('has exactly one operation per route of the route table, and nothing else', () => {
    for (const r of all) expect(op(r), `${r.method} ${r.path}`).toBeDefined();
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(all.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('gives every operation responses, including its success status', () => {
    for (const r of all) {
      const o = op(r) as Operation;
      expect(Object.keys(o.responses).length, `${r.method} ${r.path}`).toBeGreaterThan(0);
      expect(o.responses[String(r.status ?? 200)], `${r.method} ${r.path}`).toBeDefined();
      for (const res of Object.values(o.responses)) expect(res.description).toEqual(expect.any(String));
    }
  });

  it('has unique operationIds', () => {
    const ids = operations().map((o) => o.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a JSON request body exactly for the routes with a body schema', () => {
    for (const r of all) {
      const o = op(r) as Operation;
      if (r.body) {
        expect(o.requestBody, `${r.method} ${r.path}`).toBeDefined();
        expect(o.requestBody?.content['application/json']?.schema).toEqual(expect.any(Object));
        expect(o.responses['400']).toBeDefined();
        expect(o.responses['413']).toBeDefined();
      } else {
        expect(o.requestBody, `${r.method} ${r.path}`).toBeUndefined();
      }
    }
  });

  it('declares every path template parameter as a required path parameter', () => {
    for (const r of all) {
      const templated = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = ((op(r) as Operation).parameters ?? []).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), `${r.method} ${r.path}`).toEqual(templated);
      expect(declared.every((p) => p.required)).toBe(true);
    }
  });

  it('documents the credentials and the errors they bring', () => {
    for (const r of all) {
      const o = op(r) as Operation;
      const where = `${r.method} ${r.path}`;
      if (r.auth.kind === 'none') {
        // Explicitly none (a linter cannot tell a forgotten security from a public route otherwise).
        expect(o.security, where).toEqual([]);
        // No credential to refuse; login refuses a wrong password, Slack's requests a wrong signature.
        if (r.path === '/api/auth/login') expect(codesOf('POST', r.path, 401)).toEqual(['INVALID_CREDENTIALS']);
        else if (r.path.startsWith('/api/integrations/slack/')) expect(codesOf('POST', r.path, 401)).toEqual(['INVALID_SLACK_SIGNATURE']);
        else expect(o.responses['401'], where).toBeUndefined();
      } else if (r.auth.kind === 'webhook') {
        // The trigger takes the bound key in any of three places, an HMAC signature, or nothing (open).
        expect(o.security, where).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }, {}]);
        for (const status of ['401', '403', '404', '409', '415', '429', '400', '413'])
          expect(o.responses[status], `${where} ${status}`).toBeDefined();
      } else if (r.auth.kind === 'session' && r.auth.keyScope) {
        // A console route a program reads too: the session, or an API key with the scope (Bearer or X-API-Key).
        expect(o.security, where).toEqual([{ session: [] }, { apiKey: [] }, { apiKeyHeader: [] }]);
        expect((o as { 'x-required-scope'?: string })['x-required-scope'], where).toBe(r.auth.keyScope);
        expect(codesOf(r.method, r.path, 401), where).toEqual(expect.arrayContaining(['INVALID_SESSION', 'INVALID_API_KEY']));
        expect(codesOf(r.method, r.path, 403), where).toContain('INSUFFICIENT_SCOPE');
      } else {
        expect(o.security, where).toEqual([{ [r.auth.kind]: [] }]);
        expect(o.responses['401'], where).toBeDefined();
        expect(Object.keys(doc.components.securitySchemes)).toContain(r.auth.kind);
      }
      for (const [status, res] of Object.entries(o.responses)) {
        if (Number(status) < 400) continue;
        if (r.html && !(status === '429' && res.content?.['application/json'])) {
          // An HTML page's refusals are pages too (text/html), their codes named beside them.
          expect(Object.keys(res.content ?? {}), `${where} ${status}`).toEqual(['text/html']);
          expect((res as { 'x-problem-codes'?: string[] })['x-problem-codes']?.length, `${where} ${status}`).toBeGreaterThan(0);
          continue;
        }
        const problem = res.content?.['application/problem+json']?.schema as { allOf?: unknown[] } | undefined;
        // The edge's throttle is the one answer not made by the function (API Gateway's own body).
        if (status === '429' && !problem) expect(res.content?.['application/json'], where).toBeDefined();
        else {
          expect(problem?.allOf?.[0], `${where} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
          const codes = (problem?.allOf?.[1] as { properties?: { code?: { enum?: string[] } } } | undefined)?.properties?.code?.enum ?? [];
          expect(codes.length, `${where} ${status}`).toBeGreaterThan(0);
        }
      }
    }
  });

  it('describes the success body of routes that declare a response schema', () => {
    for (const r of all) {
      const res = (op(r) as Operation).responses[String(r.status ?? 200)];
      if (r.response) expect(res?.content?.['application/json']?.schema, `${r.method} ${r.path}`).toEqual(expect.any(Object));
      else if (r.ndjson) expect(Object.keys(res?.content ?? {}), `${r.method} ${r.path}`).toEqual(['application/x-ndjson']);
      else if (r.html) expect(Object.keys(res?.content ?? {}), `${r.method} ${r.path}`).toEqual(['text/html']);
      else expect(res?.content, `${r.method} ${r.path}`).toBeUndefined();
    }
  });
});

/** Every schema object of the document (the components' too), where it is. */
const schemasIn = (v: unknown, at = '', out: [string, Record<string, unknown>][] = []) => {
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) schemasIn(x, `${at}/${i}`, out);
  } else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (o.type === 'object' || 'propertyNames' in o) out.push([at, o]);
    for (const [k, x] of Object.entries(o)) schemasIn(x, `${at}/${k}`, out);
  }
  return out;
};

describe('the types a generated client gets', () => {
  const json = JSON.parse(JSON.stringify(doc)) as typeof doc;

  it('gives every record (an object of named keys) the type of its values: never an object that holds nothing', () => {
    const records = schemasIn(json).filter(([, s]) => 'propertyNames' in s);
    expect(records.length).toBeGreaterThan(20);
    // openapi-typescript types an object with neither properties nor additionalProperties as Record<string, never>.
    const empty = schemasIn(json).filter(([, s]) => !s.properties && !('additionalProperties' in s) && !s.allOf && !s.anyOf);
    expect(empty.map(([at]) => at)).toEqual([]);
    const variables = deref(json, { $ref: '#/components/schemas/Execution' }) as { properties: { variables: object } };
    expect(variables.properties.variables).toMatchObject({ type: 'object', additionalProperties: {} });
  });

  it('still leaves responses open to fields a newer server adds (no closed object in a response)', () => {
    const responses = Object.values(json.paths).flatMap((methods) =>
      Object.values(methods as Record<string, Operation>).flatMap((o) => Object.values(o.responses)),
    );
    // A request's form of a named schema (`<id>Input`) may refuse unknown fields; what is answered never does.
    const answered = Object.entries(json.components.schemas).filter(([name]) => !name.endsWith('Input'));
    const closed = schemasIn([responses, answered]).filter(([, s]) => s.additionalProperties === false);
    expect(closed.map(([at]) => at)).toEqual([]);
  });

  it('names the main objects once, in components, and every operation refers to them', () => {
    const names = ['Execution', 'Step', 'Event', 'Approval', 'AuditEntry', 'Workflow', 'WorkflowSummary', 'WorkflowVersion'];
    expect(Object.keys(json.components.schemas)).toEqual(expect.arrayContaining([...names, 'Problem']));
    const schemaOf = (method: string, path: string) =>
      (json.paths[path] as Record<string, Operation>)[method]?.responses['200']?.content?.['application/json']?.schema;
    expect(schemaOf('get', '/api/v1/executions/{executionId}')).toEqual({ $ref: '#/components/schemas/Execution' });
    expect(JSON.stringify(schemaOf('get', '/api/v1/executions'))).toContain('"#/components/schemas/Execution"');
    expect(JSON.stringify(schemaOf('get', '/api/audit'))).toContain('"#/components/schemas/AuditEntry"');
    expect(JSON.stringify(schemaOf('get', '/api/v1/approvals/{approvalId}'))).toContain('"#/components/schemas/Approval"');
    expect(JSON.stringify(json.components.schemas.Execution)).toContain('"#/components/schemas/Step"');
    // Nothing else holds their bodies: a named object's fields appear once in the document.
    expect(JSON.stringify(json.paths)).not.toContain('"interruptReason"');
  });

  it('types a version as an integer, in the path as in the list', () => {
    const o = (json.paths['/api/workflows/{id}/versions/{version}'] as Record<string, Operation>).get as Operation;
    expect(o.parameters?.find((p) => p.name === 'version')?.schema).toMatchObject({ type: 'integer', minimum: 1 });
    const entry = deref(json, { $ref: '#/components/schemas/WorkflowVersion' }) as { properties: { version: object } };
    expect(entry.properties.version).toMatchObject({ type: 'integer' });
  });

  it('answers the audit log as JSON on GET /api/audit and as NDJSON on its own operation, GET /api/audit/export', () => {
    const list = (json.paths['/api/audit'] as Record<string, Operation>).get as Operation;
    const ok = list.responses['200'] as { content?: object; 'x-deprecated-content'?: object };
    expect(Object.keys(ok.content ?? {})).toEqual(['application/json']);
    // The Accept-negotiated NDJSON stays for its callers, named apart from the typed content.
    expect(Object.keys(ok['x-deprecated-content'] ?? {})).toEqual(['application/x-ndjson']);
    const exp = (json.paths['/api/audit/export'] as Record<string, Operation>).get as Operation;
    expect(Object.keys(exp.responses['200']?.content ?? {})).toEqual(['application/x-ndjson']);
    expect(exp.parameters?.map((p) => p.name).sort()).toEqual(['action', 'actor', 'from', 'objectId', 'objectType', 'to']);
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('serves the same document as JSON, without credentials', async () => {
    const res = await invoke(openapiHandler, apiEvent({ method: 'GET', path: '/api/v1/openapi.json' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.json).toEqual(JSON.parse(JSON.stringify(openApiDocument(routes))));
    const again = await invoke(openapiHandler, apiEvent({ method: 'GET', path: '/api/v1/openapi.json' }));
    expect(again.body).toBe(res.body);
  });
});

/** The codes the document lists for a route's status. */
const codesOf = (method: string, path: string, status: number): string[] => {
  const o = (doc.paths[path] as Record<string, Operation>)[method.toLowerCase()] as Operation;
  const schema = o.responses[String(status)]?.content?.['application/problem+json']?.schema as
    | { allOf: [unknown, { properties: { code: { enum: string[] } } }] }
    | undefined;
  return schema?.allOf[1].properties.code.enum ?? [];
};

describe('the refusals each route documents', () => {
  it('come from its middleware stack, its schemas (unknown ids) and its domain errors', () => {
    expect(codesOf('GET', '/api/v1/executions/{executionId}', 404)).toContain('EXECUTION_NOT_FOUND');
    expect(codesOf('POST', '/api/v1/approvals/{approvalId}/approve', 409)).toContain('APPROVAL_ALREADY_HANDLED');
    expect(codesOf('POST', '/api/v1/executions/{executionId}/cancel', 409)).toContain('EXECUTION_FINISHED');
    expect(codesOf('POST', '/api/v1/executions/{executionId}/retry', 409)).toContain('EXECUTION_NOT_FAILED');
    expect(codesOf('POST', '/api/secrets', 409)).toContain('SECRET_EXISTS');
    expect(codesOf('POST', '/api/webhooks', 403)).toEqual(expect.arrayContaining(['PLAN_LIMIT_REACHED', 'NOT_WORKFLOW_EDITOR']));
    expect(codesOf('POST', '/api/webhooks', 400)).toEqual(
      expect.arrayContaining(['VALIDATION_FAILED', 'CREDENTIALS_REQUIRED', 'SECRET_REQUIRED', 'INVALID_API_KEY_BINDING']),
    );
    expect(codesOf('GET', '/api/members', 403)).toEqual([]);
    expect(codesOf('POST', '/api/members', 403)).toContain('ADMIN_ONLY');
    expect(codesOf('POST', '/api/webhooks/{webhookId}/trigger', 401)).toEqual(
      expect.arrayContaining(['KEY_NOT_BOUND', 'INVALID_SIGNATURE', 'SIGNATURE_EXPIRED']),
    );
    expect(codesOf('POST', '/api/webhooks/{webhookId}/trigger', 409)).toEqual(['WEBHOOK_DISABLED', 'IDEMPOTENCY_KEY_REUSED']);
    expect(codesOf('POST', '/api/webhook-trigger/approval', 401)).toContain('MISSING_SCOPE');
    expect(codesOf('GET', '/api/v1/executions', 403)).toContain('INSUFFICIENT_SCOPE');
  });

  it("describe the trigger's handshake answers in its 200 and require a notification's secret", () => {
    const trigger = (doc.paths['/api/webhooks/{webhookId}/trigger'] as Record<string, Operation>).post as Operation;
    const text = JSON.stringify(trigger.responses['200']);
    expect(text).toContain('"challenge"');
    expect(text).toContain('"ping"');
    expect(JSON.stringify(doc)).toMatch(/"required":\[[^\]]*"secret"[^\]]*\]/);
  });
});

describe('the HTML pages (reviewer links, one-click links)', () => {
  const page = '<!doctype html><html><body><h1>Refused</h1></body></html>';
  const problemBody = (status: number, code: string) =>
    JSON.stringify({ type: 'about:blank', title: 'Refused', status, code, detail: 'x', requestId: 'r' });
  const answers = [
    ['GET', '/api/reviews/apr_01', 403, 'REVIEW_LINK_INVALID'],
    ['GET', '/api/reviews/apr_01', 409, 'APPROVAL_ALREADY_HANDLED'],
    ['POST', '/api/reviews/apr_01', 400, 'INVALID_DECISION'],
    ['POST', '/api/reviews/apr_01', 409, 'REVIEWER_ALREADY_DECIDED'],
    ['POST', '/api/reviews/apr_01', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['GET', '/api/webhook-trigger/approval/apr_01/approve', 401, 'UNAUTHORIZED'],
    ['POST', '/api/webhook-trigger/approval/apr_01/approve', 403, 'NOT_A_REVIEWER'],
  ] as const;

  it('are documented as text/html, success and refusals alike', () => {
    for (const [method, path, status] of answers) {
      const route = all.find((r) => r.method === method && r.html && path.startsWith(r.path.split('{')[0] as string)) as Route;
      const res = (op(route) as Operation).responses[String(status)];
      expect(Object.keys(res?.content ?? {}), `${method} ${path} ${status}`).toEqual(['text/html']);
      expect(Object.keys((op(route) as Operation).responses['200']?.content ?? {})).toEqual(['text/html']);
    }
  });

  it('the contract check takes their HTML refusals and refuses problem+json from them', () => {
    for (const [method, path, status, code] of answers) {
      expect(() => checkContract(method, path, status, 'text/html; charset=utf-8', page), `${method} ${path} ${status}`).not.toThrow();
      expect(() => checkContract(method, path, status, 'application/problem+json', problemBody(status, code))).toThrow(
        /documented as text\/html/,
      );
    }
    expect(() => checkContract('GET', '/api/reviews/apr_01', 200, 'text/html; charset=utf-8', page)).not.toThrow();
    // And a JSON route's problem+json is still checked against its schema and codes.
    expect(() => checkContract('GET', '/api/v1/executions/exe_01', 404, 'text/html', page)).toThrow(
      /documented as application\/problem\+json/,
    );
    expect(() =>
      checkContract('GET', '/api/v1/executions/exe_01', 404, 'application/problem+json', problemBody(404, 'NO_SUCH_CODE')),
    ).toThrow(/does not match its schema/);
  });
});

describe('redocly lint (recommended rules)', () => {
  it('finds no error and no warning', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'flowgate-openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = join(import.meta.dirname, '../../node_modules/.bin/redocly');
    const run = spawnSync(bin, ['lint', file, '--format=json'], { encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } });
    const report = JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect(report.problems, run.stdout.slice(0, 3000)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(run.status).toBe(0);
  });
});
