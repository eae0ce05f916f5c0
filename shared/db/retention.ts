import { config } from '../config.ts';

/**
 * The `ttl` (epoch seconds) of an item that DynamoDB deletes `RETENTION_DAYS` after `from` (ms): a
 * finished run, its events, approvals, audit records and artifacts. The artifacts bucket's lifecycle
 * rule deletes the objects after the same number of days (the stack sets both from one setting).
 */
export const retentionTtl = (from: number, days = config().RETENTION_DAYS) => Math.floor(from / 1000) + days * 86_400;

/**
 * The days a run that ended is kept, by its outcome: a webhook run that SUCCEEDED
 * `SUCCEEDED_WEBHOOK_RETENTION_DAYS` (at most `RETENTION_DAYS`), any other end `RETENTION_DAYS`.
 */
export const runRetentionDays = (run: { status: string; trigger?: string }) =>
  run.status === 'SUCCEEDED' && run.trigger === 'webhook'
    ? Math.min(config().SUCCEEDED_WEBHOOK_RETENTION_DAYS, config().RETENTION_DAYS)
    : config().RETENTION_DAYS;

/**
 * How long a function instance trusts a record it read and cached (keys, webhooks, users:
 * shared/domain/records.ts; a run's current workflow: shared/engine/versions.ts): a change made in
 * another instance takes effect within this time.
 */
export const RECORD_TTL_MS = 5_000;
