import * as z from 'zod';
import { Problem } from '../schemas/common.ts';
import type { Route } from './route.ts';
import { DEFAULT_MAX_BODY } from './handler.ts';
import { requestBody } from './request-body.ts';

const schema = (s: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    io,
    unrepresentable: 'any',
    // v1 may add response fields: clients must tolerate unknown ones, so responses are never closed.
    override: (ctx) => {
      if (io === 'output') delete (ctx.jsonSchema as Record<string, unknown>).additionalProperties;
    },
  }) as Record<string, unknown>;
  return rest;
};

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

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
      ? { description: 'Success', content: { 'application/json': { schema: schema(r.response, 'output') } } }
      : { description: 'Success' },
  };
  if (r.body) responses['400'] = problem('Invalid JSON or validation failure (`errors[]`)');
  if (r.auth.kind !== 'none') responses['401'] = problem('Missing or invalid credentials');
  // Every authenticated route (and login) refuses failures from an address over AUTH_FAILURE_LIMIT.
  if (r.auth.kind === 'session' || r.throttle === 'login')
    responses['429'] = problem('Too many failed authentications from this address, or failed logins (`Retry-After`)');
  if (r.auth.kind === 'apiKey') {
    responses['403'] = problem('The key lacks the scope');
    responses['429'] = problem('Account rate limit reached, or too many failed authentications from this address (`Retry-After`)');
  }
  if (r.auth.kind === 'session' && r.auth.admin) responses['403'] = problem('Admins only');
  if (r.auth.kind === 'webhook') {
    responses['401'] = problem('Not the bound key, key invalid or without WEBHOOK_TRIGGER, or HMAC signature mismatch');
    responses['403'] = problem('Source IP not in the allowlist');
    responses['404'] = problem('No such webhook');
    responses['409'] = problem('Webhook disabled');
    responses['415'] = problem('Content-Type is not JSON');
    responses['429'] = problem('Account rate limit reached (`Retry-After`)');
    responses['400'] = problem('Body is not JSON (`INVALID_JSON`) or not an object (`BODY_NOT_OBJECT`)');
    responses['413'] = problem('Body over 1 MiB');
  }
  if (r.body) responses['413'] = problem(`Body over ${r.maxBodyBytes ?? DEFAULT_MAX_BODY} bytes`);
  return {
    operationId: r.handler.replace(/^http\//, '').replace(/\//g, '.'),
    summary: r.summary,
    tags: [r.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(r.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: schema(requestBody(r) as z.ZodType, 'input') } } } }
      : {}),
    ...(r.auth.kind === 'session' ? { security: [{ session: [] }] } : {}),
    ...(r.auth.kind === 'apiKey' ? { security: [{ apiKey: [] }], 'x-required-scope': r.auth.scope } : {}),
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
    paths[r.path] = { ...paths[r.path], [r.method.toLowerCase()]: operation(r) };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Flowgate API', version: '1.0.0', description: 'Workflow automation open platform.' },
    paths,
    components: {
      schemas: (schema(Problem, 'output').$defs ?? {}) as Record<string, unknown>,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `dyk_<id>_<secret>`' },
        session: { type: 'http', scheme: 'bearer', description: 'Console session `dys_<id>_<secret>`' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
      },
    },
  };
}
