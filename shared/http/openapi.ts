import * as z from 'zod';
import { Problem } from '../schemas/common.ts';
import { isConsolePage, type Route } from './route.ts';
import { Notification } from '../engine/definition.ts';
import { stackFor } from './handler.ts';
import { PAGE } from './page-handler.ts';
import { requestBody } from './request-body.ts';

const schema = (s: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    // v1 may add response fields: clients must tolerate unknown ones, so responses are never closed.
    override: (ctx) => {
      const json = ctx.jsonSchema as Record<string, unknown>;
      if (io === 'output') delete json.additionalProperties;
      // Optional in the schema only so that an update may leave it out to keep the stored one; a create needs it.
      if (ctx.zodSchema === Notification) json.required = [...new Set([...((json.required as string[]) ?? []), 'secret'])];
    },
  }) as Record<string, unknown>;
  return rest;
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

function operation(r: Route) {
  const parameters = [
    ...Object.entries(r.params?.shape ?? {}).map(([name, s]) => ({
      name,
      in: 'path',
      required: true,
      schema: schema(s as z.ZodType, 'input'),
    })),
    ...Object.entries(r.query?.shape ?? {}).map(([name, s]) => ({
      name,
      in: 'query',
      required: !(s as z.ZodType).safeParse(undefined).success,
      schema: schema(s as z.ZodType, 'input'),
    })),
  ];
  const status = String(r.status ?? 200);
  const responses: Record<string, unknown> = {
    [status]: r.response
      ? {
          description: 'Success',
          content: {
            'application/json': { schema: schema(r.response, 'output') },
            ...(r.ndjson ? { 'application/x-ndjson': { schema: { type: 'string', description: r.ndjson } } } : {}),
          },
        }
      : r.html
        ? { description: 'Success: an HTML page', content: HTML_PAGE }
        : { description: 'Success' },
  };
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
      ? { requestBody: { required: true, content: { 'application/json': { schema: schema(requestBody(r) as z.ZodType, 'input') } } } }
      : {}),
    ...(r.auth.kind === 'none' ? { security: [] } : {}),
    ...(r.auth.kind === 'session' ? { security: [{ session: [] }] } : {}),
    ...(r.auth.kind === 'apiKey' ? { security: [{ apiKey: [] }], 'x-required-scope': r.auth.scope } : {}),
    ...(r.auth.kind === 'callback' ? { security: [{ callback: [] }] } : {}),
    ...(r.auth.kind === 'webhook'
      ? { security: [{ apiKey: [] }, { apiKeyHeader: [] }, { apiKeyQuery: [] }, {}], 'x-required-scope': 'WEBHOOK_TRIGGER' }
      : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of every route, generated from the route table's zod schemas. */
export function openApiDocument(routes: readonly Route[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (isConsolePage(r)) continue;
    paths[r.path] = { ...paths[r.path], [r.method.toLowerCase()]: operation(r) };
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
      schemas: (schema(Problem, 'output').$defs ?? {}) as Record<string, unknown>,
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
