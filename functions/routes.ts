import { Health } from '../shared/schemas/common.ts';
import {
  CreateKeyBody,
  CreateMemberBody,
  KeyCreated,
  KeyList,
  KeyListQuery,
  KeyParams,
  LoginBody,
  LoginResult,
  Me,
  MemberList,
  UserView,
  V1Me,
} from '../shared/schemas/identity.ts';
import type { Route } from '../shared/http/route.ts';

const session = { kind: 'session' } as const;
const admin = { kind: 'session', admin: true } as const;
const none = { kind: 'none' } as const;
const read = ['table:read'] as const;
const readWrite = ['table:read', 'table:write'] as const;

/**
 * Every HTTP route of the service. The CDK stack makes one Lambda per entry, the local server mounts
 * the same handlers, the OpenAPI document is generated from it, and each handler takes its
 * settings (auth, schemas, limits) from its own entry.
 */
export const routes = [
  {
    method: 'GET',
    path: '/api/health',
    handler: 'http/health/get',
    summary: 'Liveness',
    tag: 'Service',
    auth: none,
    grants: [],
    response: Health,
  },
  {
    method: 'GET',
    path: '/api/v1/openapi.json',
    handler: 'http/v1/openapi',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Service',
    auth: none,
    grants: [],
  },

  {
    method: 'POST',
    path: '/api/auth/login',
    handler: 'http/auth/login',
    summary: 'Log in to the console',
    tag: 'Console',
    auth: none,
    grants: readWrite,
    body: LoginBody,
    response: LoginResult,
    maxBodyBytes: 4096,
  },
  {
    method: 'POST',
    path: '/api/auth/logout',
    handler: 'http/auth/logout',
    summary: 'Revoke the current session',
    tag: 'Console',
    auth: session,
    grants: readWrite,
    status: 204,
  },
  {
    method: 'GET',
    path: '/api/auth/me',
    handler: 'http/auth/me',
    summary: 'The logged-in user and account',
    tag: 'Console',
    auth: session,
    grants: read,
    response: Me,
  },

  {
    method: 'GET',
    path: '/api/members',
    handler: 'http/members/list',
    summary: 'List the account members',
    tag: 'Console',
    auth: session,
    grants: read,
    response: MemberList,
  },
  {
    method: 'POST',
    path: '/api/members',
    handler: 'http/members/create',
    summary: 'Create a member (admins)',
    tag: 'Console',
    auth: admin,
    grants: readWrite,
    body: CreateMemberBody,
    status: 201,
    response: UserView,
    maxBodyBytes: 4096,
  },

  {
    method: 'GET',
    path: '/api/keys',
    handler: 'http/keys/list',
    summary: 'List API keys with usage',
    tag: 'Console',
    auth: session,
    grants: read,
    query: KeyListQuery,
    response: KeyList,
  },
  {
    method: 'POST',
    path: '/api/keys',
    handler: 'http/keys/create',
    summary: 'Create an API key (token shown once)',
    tag: 'Console',
    auth: session,
    grants: readWrite,
    body: CreateKeyBody,
    status: 201,
    response: KeyCreated,
    maxBodyBytes: 4096,
  },
  {
    method: 'DELETE',
    path: '/api/keys/{id}',
    handler: 'http/keys/revoke',
    summary: 'Revoke an API key',
    tag: 'Console',
    auth: session,
    grants: readWrite,
    params: KeyParams,
    status: 204,
  },

  {
    method: 'GET',
    path: '/api/v1/me',
    handler: 'http/v1/me',
    summary: 'The calling key, its account and rate limit',
    tag: 'v1',
    auth: { kind: 'apiKey', scope: 'WORKFLOW_READ' },
    grants: readWrite,
    response: V1Me,
  },
] as const satisfies readonly Route[];

export type RouteKey = `${(typeof routes)[number]['method']} ${(typeof routes)[number]['path']}`;
export type RouteOf<K extends RouteKey> = Extract<(typeof routes)[number], { method: MethodOf<K>; path: PathOf<K> }>;
type MethodOf<K> = K extends `${infer M} ${string}` ? M : never;
type PathOf<K> = K extends `${string} ${infer P}` ? P : never;

/** The entry of one route, for its handler. */
export function route<K extends RouteKey>(key: K): RouteOf<K> {
  const found = routes.find((r) => `${r.method} ${r.path}` === key);
  if (!found) throw new Error(`No route ${key}`);
  return found as RouteOf<K>;
}
