import { type AuditEntry, listAuditEntries } from '../db/entities/audit.ts';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { config } from '../config.ts';
import { forbidden } from '../errors.ts';
import type { Principal } from './principal.ts';
import { getUser, type Role } from '../db/entities/user.ts';

export { actorOf, type Auditor, auditEntry, audited, changedFields, decisionAudit } from '../db/audited.ts';

// Recording: every domain function that changes something an account's people or keys asked for puts
// one entry (`audited`) in the same transaction as the change (docs/audit.md). Reading: admins read
// the account's, members their own.

export type AuditFilters = {
  actor?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  from?: number;
  to?: number;
};

/** Who reads: a member (the session's, or an API key's owner) with the role they have now. */
type Reader = { accountId: string; userId: string; role: Role };

/**
 * The reader a session or an `AUDIT_READ` key is: a key reads as its owner may, with the role the
 * owner has now (read strongly consistent; an owner gone since reads as a member: their own entries).
 */
export async function auditReader(p: Extract<Principal, { kind: 'session' | 'apiKey' }>): Promise<Reader> {
  if (p.kind === 'session') return p;
  const owner = await getUser(p.accountId, p.userId, true);
  return { accountId: p.accountId, userId: p.userId, role: owner?.role === 'admin' ? 'admin' : 'member' };
}

/**
 * Whose entries the reader may ask for: an admin any actor's (or all), a member their own only (asking
 * for another's is 403 `AUDIT_OWN_ONLY`; no actor means their own).
 */
function readableActor(p: Reader, actor: string | undefined): string | undefined {
  if (p.role === 'admin') return actor;
  if (actor !== undefined && actor !== p.userId) throw forbidden('AUDIT_OWN_ONLY', 'Members may read only their own audit entries.');
  return p.userId;
}

const binding = (p: Reader, f: AuditFilters, actor: string | undefined) =>
  `audit:${p.accountId}:${p.userId}:${JSON.stringify([actor ?? null, f.action ?? null, f.objectType ?? null, f.objectId ?? null, f.from ?? null, f.to ?? null])}`;

/**
 * How a read treats the newest entries. `settled` (the API's reads): only entries at least
 * AUDIT_SETTLE_SECONDS old (by `at`), all of which are stored by then, so a reader that follows the
 * log (polling `from` past the newest `at` it has, or walking newest-first down to it) misses none and
 * gets none twice. Unsettled (the console's page, for people): everything stored so far.
 */
export type Reading = { settled: boolean; now?: number };

/** The filters with `to` no later than the settle window's start, when settled. */
function settledFilters(f: AuditFilters, r: Reading): AuditFilters {
  if (!r.settled) return f;
  const horizon = (r.now ?? Date.now()) - config().AUDIT_SETTLE_SECONDS * 1000;
  return f.to !== undefined && f.to <= horizon ? f : { ...f, to: horizon };
}

/** One page of the entries the reader may see that match, newest first. */
export async function pageAudit(p: Reader, f: AuditFilters, limit: number, cursor: string | undefined, r: Reading = { settled: true }) {
  const actor = readableActor(p, f.actor);
  // The cursor is bound to the filters asked for: the window moves on between pages, the query does not.
  const key = binding(p, f, actor);
  const page = await listAuditEntries({ ...settledFilters(f, r), actor, accountId: p.accountId }, limit, decodeCursor(cursor, key));
  return { items: page.items, nextCursor: encodeCursor(page.lastKey, key) };
}

/** NDJSON exports stop after this many entries (the last line then says so). */
export const EXPORT_CAP = 10_000;

/**
 * Every matching entry the reader may see, newest first, page after page, up to `EXPORT_CAP`; `more`
 * when the cap cut it short.
 */
export async function exportAudit(
  p: Reader,
  f: AuditFilters,
  r: Reading = { settled: true },
): Promise<{ items: AuditEntry[]; more: boolean }> {
  const actor = readableActor(p, f.actor);
  const items: AuditEntry[] = [];
  const settled = settledFilters(f, r);
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await listAuditEntries({ ...settled, actor, accountId: p.accountId }, 500, startKey);
    items.push(...page.items);
    startKey = page.lastKey;
  } while (startKey && items.length < EXPORT_CAP);
  return { items: items.slice(0, EXPORT_CAP), more: items.length > EXPORT_CAP || startKey !== undefined };
}

/** An NDJSON body stays under this (a Lambda response holds 6 MB). */
export const EXPORT_BYTES = 5_000_000;

/** NDJSON: one entry a line; a cut-short export (more entries, or past `EXPORT_BYTES`) ends with `{"truncated":true}`. */
export function ndjson({ items, more }: { items: AuditEntry[]; more: boolean }): string {
  const lines: string[] = [];
  let bytes = 0;
  let cut = more;
  for (const e of items) {
    const line = `${JSON.stringify(e)}\n`;
    bytes += Buffer.byteLength(line);
    if (bytes > EXPORT_BYTES) {
      cut = true;
      break;
    }
    lines.push(line);
  }
  return lines.join('') + (cut ? `${JSON.stringify({ truncated: true })}\n` : '');
}

/** Whether an Accept header asks for NDJSON (before JSON). */
export const wantsNdjson = (accept: string | undefined) => /application\/x-ndjson/i.test(accept ?? '');
