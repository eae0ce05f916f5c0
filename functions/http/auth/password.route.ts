import type { Route } from '../../../shared/http/route.ts';
import { ChangePasswordBody } from '../../../shared/schemas/identity.ts';
import { readWrite, refuses, session } from '../../route-kinds.ts';

export const route = {
  method: 'POST',
  path: '/api/auth/password',
  handler: 'http/auth/password',
  summary:
    'Change my own password (the current one is checked: 400 at `currentPassword` when wrong, 429 after too many wrong guesses); every other session of mine ends',
  tag: 'Console',
  auth: session,
  grants: readWrite,
  body: ChangePasswordBody,
  status: 204,
  maxBodyBytes: 4096,
  // scrypt at N = 2^17 takes 128 MiB per hash (passwords.ts): a check and a new hash.
  memoryMb: 1024,
  errors: [...refuses(429, 'RATE_LIMITED')],
} as const satisfies Route;
