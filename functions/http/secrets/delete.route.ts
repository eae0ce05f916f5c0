import type { Route } from '../../../shared/http/route.ts';
import { SecretParams } from '../../../shared/schemas/secrets.ts';
import { admin, readWrite } from '../../route-kinds.ts';

export const route = {
  method: 'DELETE',
  path: '/api/secrets/{name}',
  handler: 'http/secrets/delete',
  summary: 'Delete an account secret (admins)',
  tag: 'Console',
  auth: admin,
  grants: readWrite,
  params: SecretParams,
  status: 204,
} as const satisfies Route;
