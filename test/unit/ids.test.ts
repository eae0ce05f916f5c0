import { describe, expect, it } from 'vitest';
import { newId, newTokenId } from '../../shared/ids.ts';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

describe('ids', () => {
  it('are a prefix and a lower-case ULID, unique, sortable by creation, with every character of the alphabet in the random part', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('ex'));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^ex_[0-9a-hjkmnp-tv-z]{26}$/);
    const random = ids.map((id) => id.slice(13)).join('');
    const counts = new Map<string, number>();
    for (const c of random) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect([...counts.keys()].sort().join('')).toBe(CROCKFORD);
    // 80,000 characters over 32: each near 2,500; a biased generator (e.g. half the bits) misses by far.
    for (const n of counts.values()) expect(Math.abs(n - 2_500)).toBeLessThan(400);
    const later = newId('ex');
    expect(later.slice(3, 13) >= (ids[0] as string).slice(3, 13)).toBe(true);
    expect(newTokenId()).toMatch(/^[0-9a-hjkmnp-tv-z]{26}$/);
  });
});
