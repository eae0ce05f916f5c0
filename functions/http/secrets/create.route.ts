import type { Route } from '../../../shared/http/route.ts';
import { CreateSecretBody, SecretView } from '../../../shared/schemas/secrets.ts';
import { admin, refuses, sealsSecrets } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/secrets',
  handler: 'http/secrets/create',
  summary: 'Create an account secret (admins)',
  tag: 'Console',
  auth: admin,
  grants: sealsSecrets,
  body: CreateSecretBody,
  status: 201,
  response: SecretView,
  maxBodyBytes: 64 * 1024,
  errors: [...refuses(409, 'SECRET_EXISTS')],
} as const satisfies Route;
