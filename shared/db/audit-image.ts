// The audit log's items as the table's stream shows them (no imports: the audit-events worker's bundle stays small).
// Their keys are ./entities/audit.ts's (PK AUDIT#<account>#<shard>).

/**
 * An account's audit entry as the table's stream gives its new image (an approval's own history
 * records are of type `audit` too, under the approval's run: not these): Lambda's event filter's
 * pattern, and the same test on an image.
 */
export const AUDIT_IMAGE_PATTERN = { type: { S: ['audit'] }, PK: { S: [{ prefix: 'AUDIT#' }] } } as const;
export const isAuditImage = (image: Record<string, { S?: string }> | undefined) =>
  image?.type?.S === 'audit' && (image.PK?.S?.startsWith(AUDIT_IMAGE_PATTERN.PK.S[0].prefix) ?? false);
