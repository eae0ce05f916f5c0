import { config } from '../config.ts';

/**
 * The `ttl` (epoch seconds) of an item that DynamoDB deletes `RETENTION_DAYS` after `from` (ms): a
 * finished run, its events, approvals, audit records and artifacts. The artifacts bucket's lifecycle
 * rule deletes the objects after the same number of days (the stack sets both from one setting).
 */
export const retentionTtl = (from: number) => Math.floor(from / 1000) + config().RETENTION_DAYS * 86_400;

/**
 * How long a function instance trusts a record it read and cached (keys, webhooks, users:
 * shared/domain/records.ts; a run's current workflow: shared/engine/versions.ts): a change made in
 * another instance takes effect within this time.
 */
export const RECORD_TTL_MS = 5_000;
