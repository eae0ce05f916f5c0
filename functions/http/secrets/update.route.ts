import type { Route } from '../../../shared/http/route.ts';
import { SecretParams, SecretView, UpdateSecretBody } from '../../../shared/schemas/secrets.ts';
import { admin, sealsSecrets } from '../../route-kinds.ts';

export const route = {
  method: 'PUT',
  path: '/api/secrets/{name}',
  handler: 'http/secrets/update',
  summary: "Replace an account secret's value (admins)",
  tag: 'Console',
  auth: admin,
  grants: sealsSecrets,
  params: SecretParams,
  body: UpdateSecretBody,
  response: SecretView,
  maxBodyBytes: 64 * 1024,
} as const satisfies Route;
