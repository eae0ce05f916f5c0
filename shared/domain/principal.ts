import type { Role } from '../db/entities/user.ts';
import type { Plan } from '../config.ts';
import type { Scope } from '../db/entities/api-key.ts';
import type { Webhook } from '../db/entities/webhook.ts';
import type { Callback } from '../db/entities/callback.ts';
import type { Via } from '../db/audited.ts';

export type { Via };

/** Who is calling: a console user (session), an API key acting for its owner, or a webhook's sender. */
export type Principal =
  /** `userGen`: the membership generation the session was made under (user.ts `gen`). */
  | { kind: 'session'; accountId: string; userId: string; role: Role; sessionId: string; userGen?: number; via?: Via }
  | { kind: 'apiKey'; accountId: string; userId: string; keyId: string; scopes: readonly Scope[]; plan: Plan; via?: Via }
  /** Past the webhook's checks; `keyId` is the bound key in `api_key` mode. */
  | { kind: 'webhook'; accountId: string; userId?: undefined; webhook: Webhook; keyId?: string }
  /** A callback's token: that callback, nothing else. */
  | { kind: 'callback'; accountId: string; userId?: undefined; callback: Callback; plan: Plan };
