import type { Route } from '../../../shared/http/route.ts';
import { ChangePasswordBody } from '../../../shared/schemas/identity.ts';
import { readWrite, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/auth/password',
  handler: 'http/auth/password',
  summary: 'Change my own password (the current one is checked: 400 at `currentPassword` when wrong)',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  body: ChangePasswordBody,
  status: 204,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts): a check and a new hash.
  memoryMb: 1024,
} as const satisfies Route;
