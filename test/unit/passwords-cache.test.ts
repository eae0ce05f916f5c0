import { describe, expect, it, vi } from 'vitest';
import { TtlCache } from '../../shared/cache.ts';
import { resetConfig } from '../../shared/config.ts';
import { dummyHash, hashPassword, needsRehash, SCRYPT_N, verifyPassword } from '../../shared/passwords.ts';

describe('hashPassword / verifyPassword', () => {
  it('round-trips, and a wrong password is refused', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(stored).not.toContain('correct horse battery');
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
    expect(await verifyPassword('correct horse battery ', stored)).toBe(false);
  });

  it('salts: the same password hashes differently each time, and both verify', async () => {
    const [a, b] = await Promise.all([hashPassword('pässwörd ✓ 🔑'), hashPassword('pässwörd ✓ 🔑')]);
    expect(a).not.toBe(b);
    expect(await verifyPassword('pässwörd ✓ 🔑', a)).toBe(true);
    expect(await verifyPassword('pässwörd ✓ 🔑', b)).toBe(true);
    expect(await verifyPassword('passwörd ✓ 🔑', b)).toBe(false);
  });

  it('is false, without throwing, when there is no stored hash (unknown user)', async () => {
    await expect(verifyPassword('anything at all', undefined)).resolves.toBe(false);
    await expect(verifyPassword('', undefined)).resolves.toBe(false);
  });

  it('is false, without throwing, for a stored hash that is garbage', async () => {
    const real = await hashPassword('correct horse battery');
    const [, , , , salt = '', hash = ''] = real.split('$');
    const garbage = [
      '',
      'garbage',
      '$$$$$',
      'bcrypt$16384$8$1$AAAA$AAAA',
      `scrypt$16384$8$1$${salt}$`,
      `scrypt$16384$8$1$$${hash}`,
      // Unusable cost parameters must not throw out of the login path.
      `scrypt$x$y$z$${salt}$${hash}`,
      `scrypt$1$8$1$${salt}$${hash}`,
      `scrypt$3$8$1$${salt}$${hash}`,
      `scrypt$1073741824$8$1$${salt}$${hash}`,
      `scrypt$-16384$8$1$${salt}$${hash}`,
      // A hash part that decodes to zero bytes must not make every password match.
      `scrypt$16384$8$1$${salt}$A`,
      'scrypt$16384$8$1$!!!!$@@@@',
      `scrypt$16384$8$1$${salt}$${hash.slice(0, 10)}`,
    ];
    const outcomes = await Promise.all(
      garbage.map((stored) =>
        verifyPassword('correct horse battery', stored).then(
          (ok) => ({ stored, outcome: ok }),
          (e: Error) => ({ stored, outcome: `throws ${e.message}` }),
        ),
      ),
    );
    expect(outcomes.filter((o) => o.outcome !== false)).toEqual([]);
  });
});

describe('password hashing cost', () => {
  it('is scrypt N=2^17, r=8, p=1 by default (the test suite lowers N), and older parameters need a rehash', async () => {
    const lowered = process.env.PASSWORD_SCRYPT_N;
    delete process.env.PASSWORD_SCRYPT_N;
    resetConfig();
    try {
      expect(SCRYPT_N).toBe(2 ** 17);
      const stored = await hashPassword('correct horse battery');
      expect(stored).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
      expect(await verifyPassword('correct horse battery', stored)).toBe(true);
      expect(needsRehash(stored)).toBe(false);
      expect(needsRehash(stored.replace('$131072$', '$16384$'))).toBe(true);
      expect(needsRehash(stored.replace('$8$1$', '$8$2$'))).toBe(true);
      // An unknown email is checked against a dummy hash at today's cost: the same work as a known one.
      expect(dummyHash()).toMatch(/^scrypt\$131072\$8\$1\$/);
    } finally {
      process.env.PASSWORD_SCRYPT_N = lowered;
      resetConfig();
    }
  });
});

describe('TtlCache', () => {
  it('serves a hit within the ttl without calling the loader again', async () => {
    const cache = new TtlCache<number>(1000);
    const load = vi.fn(async () => 42);
    expect(await cache.get('k', load, 10_000)).toBe(42);
    expect(await cache.get('k', load, 10_500)).toBe(42);
    expect(await cache.get('k', load, 10_999)).toBe(42);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('reloads once the ttl has passed', async () => {
    const cache = new TtlCache<string>(1000);
    let n = 0;
    const load = vi.fn(async () => `v${++n}`);
    expect(await cache.get('k', load, 10_000)).toBe('v1');
    expect(await cache.get('k', load, 11_000)).toBe('v2');
    expect(await cache.get('k', load, 11_500)).toBe('v2');
    expect(await cache.get('k', load, 12_001)).toBe('v3');
    expect(load).toHaveBeenCalledTimes(3);
  });

  it('keeps keys apart', async () => {
    const cache = new TtlCache<string>(1000);
    expect(await cache.get('a', async () => 'A', 0)).toBe('A');
    expect(await cache.get('b', async () => 'B', 0)).toBe('B');
    expect(await cache.get('a', async () => 'not loaded', 1)).toBe('A');
  });

  it('evicts the oldest entry when over maxEntries, and never holds more', async () => {
    const cache = new TtlCache<string>(60_000, 2);
    const load = vi.fn(async () => 'x');
    await cache.get('a', load, 0);
    await cache.get('b', load, 0);
    await cache.get('c', load, 0); // evicts a
    expect(load).toHaveBeenCalledTimes(3);
    await cache.get('b', load, 1);
    await cache.get('c', load, 1);
    expect(load).toHaveBeenCalledTimes(3);
    await cache.get('a', load, 1); // reloaded; evicts b
    expect(load).toHaveBeenCalledTimes(4);
    await cache.get('c', load, 2);
    expect(load).toHaveBeenCalledTimes(4);
    await cache.get('b', load, 2);
    expect(load).toHaveBeenCalledTimes(5);
    expect((cache as unknown as { entries: Map<string, unknown> }).entries.size).toBe(2);
  });

  it('does not cache a failed load', async () => {
    const cache = new TtlCache<string>(60_000);
    await expect(cache.get('k', async () => Promise.reject(new Error('boom')), 0)).rejects.toThrow('boom');
    expect(await cache.get('k', async () => 'ok', 1)).toBe('ok');
  });

  it('clear() forgets everything', async () => {
    const cache = new TtlCache<string>(60_000);
    const load = vi.fn(async () => 'x');
    await cache.get('k', load, 0);
    cache.clear();
    await cache.get('k', load, 1);
    expect(load).toHaveBeenCalledTimes(2);
  });
});
