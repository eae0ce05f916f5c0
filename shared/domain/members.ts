import { listUsers, publicUser, type Role } from '../db/entities/user.ts';
import { createUser } from './accounts.ts';
import type { Principal } from './principal.ts';

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

export async function listMembers(p: SessionPrincipal) {
  const users = await listUsers(p.accountId);
  return { items: users.map(publicUser), nextCursor: null };
}

/** Admins add members (or further admins) to their own account. */
export async function createMember(p: SessionPrincipal, input: { email: string; password: string; role: Role }) {
  return publicUser(await createUser(p.accountId, input.email, input.password, input.role));
}
