import { describe, expect, it } from 'vitest';
import { handler as openapiHandler } from '../../functions/http/v1/openapi.ts';
import { routes } from '../../functions/routes.ts';
import { openApiDocument } from '../../shared/http/openapi.ts';
import type { Route } from '../../shared/http/route.ts';
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
const all = routes as readonly Route[];
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
        expect(o.security, where).toBeUndefined();
        expect(o.responses['401'], where).toBeUndefined();
      } else if (r.auth.kind === 'webhook') {
        // The trigger takes the bound key in any of three places, an HMAC signature, or nothing (open).
        expect(o.security, where).toEqual([{ apiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }, {}]);
        for (const status of ['401', '403', '404', '409', '415', '429', '400', '413'])
          expect(o.responses[status], `${where} ${status}`).toBeDefined();
      } else {
        expect(o.security, where).toEqual([{ [r.auth.kind]: [] }]);
        expect(o.responses['401'], where).toBeDefined();
        expect(Object.keys(doc.components.securitySchemes)).toContain(r.auth.kind);
      }
      for (const [status, res] of Object.entries(o.responses)) {
        if (Number(status) >= 400)
          expect(res.content?.['application/problem+json']?.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
      }
    }
  });

  it('describes the success body of routes that declare a response schema', () => {
    for (const r of all) {
      const res = (op(r) as Operation).responses[String(r.status ?? 200)];
      if (r.response) expect(res?.content?.['application/json']?.schema, `${r.method} ${r.path}`).toEqual(expect.any(Object));
      else expect(res?.content, `${r.method} ${r.path}`).toBeUndefined();
    }
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
