import type { AuditRecord as ApprovalAuditRecord } from './entities/approval.ts';
import {
  AUDIT_CHANNELS,
  type AuditAction,
  type AuditActor,
  type AuditChannel,
  type AuditEntry,
  type AuditObject,
  auditPut,
  newAccountAuditId,
} from './entities/audit.ts';

// Recording: every change an account's people or keys ask for puts one entry (`audited`) in the same
// transaction as the change (docs/audit.md). Here, below the engine and the domain, so both record.

/**
 * Where a person's call came from, for the audit log: the caller's address and the way in (console
 * page, API, the operator's CLI, a one-click or reviewer link, Slack). Set where the principal is
 * built (the HTTP layer); absent (a direct call, a test) the audit log says `api` and no address.
 */
export type Via = { ip?: string; channel: AuditChannel };

/**
 * Who acted, as the audit log needs it: any principal (a session's user, an API key and its owner), a
 * person without either (a Slack click mapped to a member, a reviewer's own link: `userId` and `via`),
 * the operator's CLI (`kind: 'operator'`), or nobody signed in (`kind: 'anonymous'`: a failed sign-in).
 */
export type Auditor = {
  accountId: string;
  kind?: string;
  userId?: string;
  keyId?: string;
  email?: string;
  via?: Via;
};

export function actorOf(a: Auditor): AuditActor {
  const user = a.userId ? { userId: a.userId } : {};
  if (a.kind === 'operator') return { kind: 'operator' };
  if (a.kind === 'anonymous') return { kind: 'anonymous', ...user, ...(a.email ? { email: a.email } : {}) };
  if (a.keyId && a.kind !== 'session') return { kind: 'key', ...user, keyId: a.keyId };
  return a.userId ? { kind: 'user', userId: a.userId } : { kind: 'anonymous' };
}

const defaultChannel = (a: Auditor): AuditChannel => (a.kind === 'operator' ? 'cli' : 'api');

/** The entry of one change by `who`. */
export function auditEntry(
  who: Auditor,
  action: AuditAction,
  object: AuditObject,
  details?: Record<string, unknown>,
  now = Date.now(),
): AuditEntry {
  return {
    auditId: newAccountAuditId(now),
    accountId: who.accountId,
    at: now,
    action,
    actor: actorOf(who),
    channel: who.via?.channel ?? defaultChannel(who),
    ...(who.via?.ip ? { ip: who.via.ip } : {}),
    object: { ...object, ...(object.name !== undefined ? { name: object.name.slice(0, 200) } : {}) },
    ...(details && Object.keys(details).length ? { details } : {}),
  };
}

/** The transaction item that records one change by `who` (append it to the change's transaction). */
export const audited = (who: Auditor, action: AuditAction, object: AuditObject, details?: Record<string, unknown>, now = Date.now()) =>
  auditPut(auditEntry(who, action, object, details, now));

/** The names of the fields a patch sets (what an `*.updated` entry records: never their values). */
export const changedFields = (patch: Record<string, unknown>) =>
  Object.keys(patch)
    .filter((k) => patch[k] !== undefined)
    .sort();

/** The audit log's channel of an approval decision's channel (a reviewer's own link, sent by mail or Teams, is a link). */
export const decisionChannel = (c: ApprovalAuditRecord['channel']): AuditChannel =>
  c === 'post' || c === 'v1' ? 'api' : (AUDIT_CHANNELS as readonly string[]).includes(c) ? (c as AuditChannel) : 'link';

/**
 * The account log's entry of an approval decision or refused attempt, from the approval's own audit record
 * (`approval.approved` / `approval.rejected` / `approval.refused`), as a transaction item to write beside it.
 * `channel`: where it came from when the record's channel does not say (a reviewer's link sent by Slack).
 */
export function decisionAudit(r: ApprovalAuditRecord, channel?: AuditChannel) {
  const action = r.outcome === 'refused' ? 'approval.refused' : r.decision === 'reject' ? 'approval.rejected' : 'approval.approved';
  const who: Auditor = r.userId
    ? { accountId: r.accountId, userId: r.userId, keyId: r.keyId, kind: r.keyId ? 'apiKey' : 'person' }
    : { accountId: r.accountId, kind: 'anonymous' };
  const details = {
    ...(r.decision ? { decision: r.decision } : {}),
    ...(r.outcome === 'refused' ? { status: r.status, code: r.code } : {}),
  };
  return audited(
    { ...who, via: { ip: r.sourceIp, channel: channel ?? decisionChannel(r.channel) } },
    action,
    { type: 'approval', id: r.approvalId },
    details,
    r.at,
  );
}
