import { listSecrets, membersOf } from '../db/entities/account-secret.ts';
import { getUser } from '../db/entities/user.ts';
import { notFound } from '../errors.ts';
import { definitionOf } from '../engine/versions.ts';
import type { SessionPrincipal } from './schedules.ts';
import { pageWorkflows } from './workflows.ts';

// What the console's secrets page reads: each secret (never its value) with who last set it, and
// where it is used — the workflows whose current definitions refer to it (`$secrets.NAME`) in their
// steps or their notifications. Reading definitions costs a read per workflow: the page reads the
// account's newest USE_SCAN_WORKFLOWS and says so when there are more.

/** Workflows whose definitions the page reads for references. */
export const USE_SCAN_WORKFLOWS = 200;

const REFERENCE = /\$secrets\.([A-Za-z_][A-Za-z0-9_]*)/g;
const namesIn = (value: unknown) => new Set([...JSON.stringify(value ?? null).matchAll(REFERENCE)].map((m) => m[1] as string));

export type SecretUse = { workflowId: string; workflowName: string; where: 'steps' | 'notifications' };

export async function secretsWithUse(p: SessionPrincipal) {
  const [secrets, workflows] = await Promise.all([listSecrets(p.accountId), pageWorkflows(p.accountId, USE_SCAN_WORKFLOWS, undefined)]);
  const uses = new Map<string, SecretUse[]>();
  const note = (name: string, use: SecretUse) => uses.set(name, [...(uses.get(name) ?? []), use]);
  for (const w of workflows.items) {
    let def: ReturnType<typeof definitionOf>;
    try {
      def = definitionOf(w.definition);
    } catch {
      continue;
    }
    const base = { workflowId: w.workflowId, workflowName: w.name };
    for (const n of namesIn(def.steps)) note(n, { ...base, where: 'steps' });
    for (const n of namesIn(def.notifications)) note(n, { ...base, where: 'notifications' });
  }
  const by = new Set(secrets.flatMap((s) => (s.updatedBy ? [s.updatedBy] : [])));
  const emails = new Map(await Promise.all([...by].map(async (id) => [id, (await getUser(p.accountId, id))?.email ?? id] as const)));
  const items = secrets
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((s) => ({
      name: s.name,
      allowedHosts: s.allowedHosts ?? null,
      members: membersOf(s),
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      updatedBy: s.updatedBy ? (emails.get(s.updatedBy) ?? null) : null,
      lastUsedAt: s.lastUsedAt ?? null,
      usedBy: uses.get(s.name) ?? [],
    }));
  return { items, scannedAll: workflows.nextCursor === null };
}
export type ConsoleSecret = Awaited<ReturnType<typeof secretsWithUse>>['items'][number];

/** One secret as the console shows it (with its uses), or 404 `SECRET_NOT_FOUND` (another account's name is none of this one's). */
export async function requireConsoleSecret(p: SessionPrincipal, name: string) {
  const found = (await secretsWithUse(p)).items.find((s) => s.name === name);
  if (!found) throw notFound('SECRET_NOT_FOUND', `No secret named ${name}.`);
  return found;
}
