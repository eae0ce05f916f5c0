import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { config, resetConfig } from '../../shared/config.ts';

/**
 * The audit log's settle window (AUDIT_SETTLE_SECONDS, docs/audit.md "Following the log") holds only
 * if every entry is stored within it of its `at` (its request's start): every function that records
 * one ends well before (its timeout at most half the window), so a reader that waits for the window
 * never sees an entry appear below what it has read.
 */
const defaultSettle = () => {
  const given = process.env.AUDIT_SETTLE_SECONDS;
  delete process.env.AUDIT_SETTLE_SECONDS;
  resetConfig();
  try {
    return config().AUDIT_SETTLE_SECONDS;
  } finally {
    process.env.AUDIT_SETTLE_SECONDS = given;
    resetConfig();
  }
};

describe('the audit settle window', () => {
  it('is over twice the timeout of every route (each records its entries before its function ends)', () => {
    const settle = defaultSettle();
    expect(settle).toBe(30);
    for (const r of routes) expect((r as { timeoutSeconds?: number }).timeoutSeconds ?? 10, r.path).toBeLessThanOrEqual(settle / 2);
  });
});
