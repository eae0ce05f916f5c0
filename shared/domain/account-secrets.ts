import {
  type AccountSecret,
  deleteSecret,
  listSecrets,
  membersOf,
  putSecret,
  type SecretSummary,
  updateSecretItem,
} from '../db/entities/account-secret.ts';
import { forgetSecret, sealContext } from '../db/secret-values.ts';
import { conflict, notFound } from '../errors.ts';
import { keyring, seal } from '../keyring.ts';
import { audited, changedFields } from '../db/audited.ts';
import type { Principal } from './principal.ts';

/**
 * Account secrets: named values admins store once and definitions read as `$secrets.NAME`
 * (shared/engine/secret-refs.ts). Values are sealed at rest (shared/keyring.ts) and never leave
 * through the API; the workers open the ones they use through shared/db/secret-values.ts.
 */

type SessionPrincipal = Extract<Principal, { kind: 'session' }>;

const secretNotFound = (name: string) => notFound('SECRET_NOT_FOUND', `No secret named ${name}.`);

/** What the console shows of a secret: never its value. */
export const secretView = (s: SecretSummary) => ({
  name: s.name,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
  lastUsedAt: s.lastUsedAt ?? null,
  allowedHosts: s.allowedHosts ?? null,
  members: membersOf(s),
});

const secretObject = (name: string) => ({ type: 'secret', id: name, name });

type SecretRules = { allowedHosts?: string[]; members?: 'use' | 'none' };

export async function createSecret(p: SessionPrincipal, input: { name: string; value: string } & SecretRules, now = Date.now()) {
  const sealed = await seal(keyring(), input.value, sealContext(p.accountId, input.name));
  const secret: AccountSecret = {
    accountId: p.accountId,
    name: input.name,
    ...sealed,
    createdAt: now,
    updatedAt: now,
    ...(input.allowedHosts ? { allowedHosts: [...new Set(input.allowedHosts)] } : {}),
    members: input.members ?? 'none',
    updatedBy: p.userId,
  };
  const entry = audited(
    p,
    'secret.created',
    secretObject(input.name),
    { allowedHosts: secret.allowedHosts ?? null, members: secret.members },
    now,
  );
  if (!(await putSecret(secret, [entry])))
    throw conflict('SECRET_EXISTS', `A secret named ${input.name} exists; PUT /api/secrets/${input.name} replaces its value.`);
  return secretView(secret);
}

export async function listAccountSecrets(p: SessionPrincipal) {
  const items = await listSecrets(p.accountId);
  return { items: items.sort((a, b) => (a.name < b.name ? -1 : 1)).map(secretView), nextCursor: null };
}

/** Replace a secret's value, host binding (null removes it) or members rule; what is not sent stays. */
export async function updateSecret(
  p: SessionPrincipal,
  name: string,
  change: { value?: string; allowedHosts?: string[] | null; members?: 'use' | 'none' },
  now = Date.now(),
) {
  // Sealing first costs a data key for a name that may not exist; it saves a read on every update.
  const sealed = change.value === undefined ? undefined : await seal(keyring(), change.value, sealContext(p.accountId, name));
  const allowedHosts = change.allowedHosts && [...new Set(change.allowedHosts)];
  // What changed is named (`value` when it was replaced), never a value.
  const entry = audited(p, 'secret.updated', secretObject(name), { changed: changedFields(change) }, now);
  const updated = await updateSecretItem(p.accountId, name, { sealed, allowedHosts, members: change.members, updatedBy: p.userId }, now, [
    entry,
  ]);
  if (!updated) throw secretNotFound(name);
  forgetSecret(p.accountId, name);
  return secretView(updated);
}

export async function removeSecret(p: SessionPrincipal, name: string): Promise<void> {
  if (!(await deleteSecret(p.accountId, name, [audited(p, 'secret.deleted', secretObject(name))]))) throw secretNotFound(name);
  forgetSecret(p.accountId, name);
}
