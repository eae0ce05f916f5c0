import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REFUSAL_REASONS, refusalReason } from '../../functions/http/console/webhooks/refusals.ts';

/**
 * The console's reason of each refusal (a webhook's inbound log) and the table of docs/webhooks.md "Each
 * refusal, and what to check": the same codes, row for row (a 404 of an unknown webhook is in no log).
 */

const docs = readFileSync(join(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
const table = docs.slice(docs.indexOf('### Each refusal, and what to check'));
const documented = [...table.matchAll(/^\| \d{3} \| ([^|]+) \|/gm)].flatMap((m) =>
  [...(m[1] as string).matchAll(/`([A-Z_]+)`/g)].map((c) => c[1]),
);

describe('refusal reasons', () => {
  it('gives a reason for every code the docs list as a refusal of the trigger, and none other', () => {
    expect(documented.length).toBeGreaterThan(10);
    expect(Object.keys(REFUSAL_REASONS).sort()).toEqual(documented.filter((c) => c !== 'WEBHOOK_NOT_FOUND').sort());
  });

  it('says a code it does not know by name', () => {
    expect(refusalReason('INVALID_JSON')).toBe('The body is not JSON.');
    expect(refusalReason('SOMETHING_NEW')).toBe('Refused with SOMETHING_NEW.');
  });
});
