import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod';
import { documentedAs, Problem } from '../schemas/common.ts';
import { isConsolePage, type Route } from './route.ts';
import { Notification } from '../engine/definition.ts';
import { stackFor } from './handler.ts';
import { PAGE } from './page-handler.ts';
import { requestBody } from './request-body.ts';

/**
 * The document's named schemas (`.meta({ id })` on a zod schema: the main objects, `Problem`), filled
 * as operations are converted: every operation references them with `$ref`. A request's form of a
 * named schema (defaults optional, a console route's unknown fields refused) is `<id>Input`.
 */
type Components = Record<string, unknown>;

const schema = (s: z.ZodType, io: 'input' | 'output', components: Components) => {
  const {
    $schema: _drop,
    $defs,
    ...rest
  } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      const json = ctx.jsonSchema as Record<string, unknown>;
      const as = documentedAs.get(ctx.zodSchema);
      if (as) {
        for (const k of Object.keys(json)) delete json[k];
        Object.assign(json, as);
      }
      // v1 may add response fields: clients must tolerate unknown ones, so responses are never closed.
      // Only a closed object is opened: a record keeps its `additionalProperties` (the type of its values).
      if (io === 'output' && json.additionalProperties === false) delete json.additionalProperties;
      // Optional in the schema only so that an update may leave it out to keep the stored one; a create needs it.
      if (ctx.zodSchema === Notification) json.required = [...new Set([...((json.required as string[]) ?? []), 'secret'])];
    },
  }) as Record<string, unknown>;
  const suffix = io === 'input' ? 'Input' : '';
  const relink = <T>(v: T): T =>
    JSON.parse(
      JSON.stringify(v).replace(/"#\/\$defs\/([^"]+)"/g, (_, id: string) => JSON.stringify(`#/components/schemas/${id}${suffix}`)),
    );
  for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
    const json = relink(def);
    const name = `${id}${suffix}`;
    if (components[name] !== undefined && !isDeepStrictEqual(components[name], json))
      throw new Error(`Two different schemas are named ${name} in the OpenAPI document`);
    components[name] = json;
  }
  return relink(rest);
};

/** Why each status is answered, whatever the code. */
const WHY: Record<number, string> = {
  400: 'The request is not valid',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not in a state that allows this',
  413: 'Body too large',
  415: 'Content-Type is not JSON',
  429: 'Too many requests (`Retry-After`)',
};

/** An HTML page (the link pages: `html` routes answer every refusal as a page too). */
const HTML_PAGE = { 'text/html': { schema: { type: 'string', description: 'An HTML page' } } };

/** A problem+json answer whose `code` is one of `codes`; on an `html` route, an HTML page that says it. */
const problem = (status: number, codes: readonly string[], html = false) => ({
  description: `${(html && status === 415 ? 'Content-Type is not a form' : WHY[status]) ?? 'Refused'}: ${codes.map((c) => `\`${c}\``).join(', ')}${html ? ' (an HTML page with the reason)' : ''}`,
  content: html
    ? HTML_PAGE
    : {
        'application/problem+json': {
          schema: { allOf: [{ $ref: '#/components/schemas/Problem' }, { type: 'object', properties: { code: { enum: codes } } }] },
        },
      },
  ...(html ? { 'x-problem-codes': codes } : {}),
});

/**
 * Every refusal a route can answer: those of its middleware stack (each middleware declares what it
 * refuses; `parseRequest` derives the unknown-id codes from the route's schemas) and those of its
 * domain work (`route.errors`).
 */
export function routeProblems(r: Route): Map<number, string[]> {
  const all = [...stackFor(r, r.html ? PAGE : undefined).flatMap((m) => m.problems ?? []), ...(r.errors ?? [])];
  const byStatus = new Map<number, string[]>();
  for (const { status, code } of all) {
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** Who may call: the credential schemes, and the key scope a key needs. */
function security(auth: Route['auth']) {
  switch (auth.kind) {
    case 'none':
      return { security: [] };
    case 'session':
      return auth.keyScope
        ? { security: [{ session: [] }, { apiKey: [] }, { apiKeyHeader: [] }], 'x-required-scope': auth.keyScope }
        : { security: [{ session: [] }] };
    case 'apiKey':
      return { security: [{ apiKey: [] }], 'x-required-scope': auth.scope };
    case 'callback':
      return { security: [{ callback: [] }] };
    case 'webhook':
      return { security: [{ apiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }, {}], 'x-required-scope': 'WEBHOOK_TRIGGER' };
    default:
      return {};
  }
}

function operation(r: Route, components: Components) {
  const parameters = [
    ...Object.entries(r.params?.shape ?? {}).map(([name, s]) => ({
      name,
      in: 'path',
      required: true,
      schema: schema(s as z.ZodType, 'input', components),
    })),
    ...Object.entries(r.query?.shape ?? {}).map(([name, s]) => ({
      name,
      in: 'query',
      required: !(s as z.ZodType).safeParse(undefined).success,
      schema: schema(s as z.ZodType, 'input', components),
    })),
  ];
  const status = String(r.status ?? 200);
  const ndjson = (what: string) => ({ 'application/x-ndjson': { schema: { type: 'string', description: what } } });
  const responses: Record<string, unknown> = {
    [status]: r.response
      ? {
          description: 'Success',
          content: { 'application/json': { schema: schema(r.response, 'output', components) } },
          ...(r.ndjsonByAccept ? { 'x-deprecated-content': ndjson(r.ndjsonByAccept) } : {}),
        }
      : r.ndjson
        ? { description: 'Success: NDJSON', content: ndjson(r.ndjson) }
        : r.html
          ? { description: 'Success: an HTML page', content: HTML_PAGE }
          : { description: 'Success' },
  };
  if (r.noContent) responses['204'] = { description: r.noContent };
  if (r.redirect)
    responses['302'] = { description: r.redirect, headers: { Location: { description: 'Where to go', schema: { type: 'string' } } } };
  for (const [s, codes] of routeProblems(r)) responses[String(s)] = problem(s, codes, r.html);
  // The edge (API Gateway's stage throttle) answers any route 429 before a function runs, in its own shape.
  if (!responses['429'])
    responses['429'] = {
      description: 'Throttled at the edge (API Gateway), before the function runs',
      content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } } },
    };
  return {
    operationId: r.handler.replace(/^http\//, '').replace(/\//g, '.'),
    summary: r.summary,
    tags: [r.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(r.body
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schema(requestBody(r) as z.ZodType, 'input', components) } },
          },
        }
      : {}),
    ...security(r.auth),
    responses,
  };
}

/** The OpenAPI 3.1 document of every route, generated from the route table's zod schemas. */
export function openApiDocument(routes: readonly Route[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Components = {};
  schema(Problem, 'output', components);
  for (const r of routes) {
    if (isConsolePage(r)) continue;
    paths[r.path] = { ...paths[r.path], [r.method.toLowerCase()]: operation(r, components) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Flowgate API',
      version: '1.0.0',
      description: 'Workflow automation open platform.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Relative: the document is served by the API it describes (`/api/v1/openapi.json`).
    servers: [{ url: '/', description: 'The API that serves this document' }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `dyk_<id>_<secret>`' },
        session: { type: 'http', scheme: 'bearer', description: 'Console session `dys_<id>_<secret>`' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        callback: {
          type: 'http',
          scheme: 'bearer',
          description: "A wait_for_callback's token `dyc_<id>_<secret>` (`$callback.token`)",
        },
      },
    },
  };
}
