import type { Role } from '../db/entities/user.ts';
import type { Plan } from '../config.ts';
import type { Scope } from '../db/entities/api-key.ts';

/** Who is calling: a console user (session) or an API key acting for its owner. */
export type Principal =
  | { kind: 'session'; accountId: string; userId: string; role: Role; sessionId: string }
  | { kind: 'apiKey'; accountId: string; userId: string; keyId: string; scopes: readonly Scope[]; plan: Plan };
