import type { Route } from '../../../shared/http/route.ts';
import { CreateKeyBody, KeyCreated } from '../../../shared/schemas/identity.ts';
import { readWrite, session } from '../../route-kinds.ts';

export const route = {
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
} as const satisfies Route;
