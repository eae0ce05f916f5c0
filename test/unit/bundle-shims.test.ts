import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// The bundles resolve some packages to smaller modules on Node's own crypto and Buffer
// (infra/constructs/bundling.ts, ALIASES). The tests run unbundled, so each shim is compared here
// with the package it stands for, on arbitrary input.

const require = createRequire(import.meta.url);
type Base64 = { encode: (b: Uint8Array) => string; decode: (s: string) => Uint8Array };
const base64 = {
  original: require('@stablelib/base64') as Base64,
  shim: require('../../infra/constructs/bundle-shims/stablelib-base64.cjs') as Base64,
};
type Sha256 = { hmac: (key: Uint8Array, data: Uint8Array) => Uint8Array };
const sha256 = {
  original: require('fast-sha256') as Sha256,
  shim: require('../../infra/constructs/bundle-shims/fast-sha256.cjs') as Sha256,
};

type Lru = {
  has: (k: string) => boolean;
  get: (k: string) => unknown;
  peek: (k: string) => unknown;
  set: (k: string, v: number) => void;
  clear: () => void;
  size: number;
};
type LruClass = new (capacity: number) => Lru;

const outcome = (f: () => Uint8Array) => {
  try {
    return { bytes: [...f()] };
  } catch (e) {
    return { error: (e as Error).message };
  }
};

describe('bundle shims', () => {
  it('fast-sha256: the same HMAC-SHA256 for any key and data', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 2000 }), (key, data) => {
        expect([...sha256.shim.hmac(key, data)]).toEqual([...sha256.original.hmac(key, data)]);
      }),
    );
  });

  it('@stablelib/base64: the same encoding of any bytes, and the same bytes or the same refusal for any string', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const encoded = base64.shim.encode(bytes);
        expect(encoded).toBe(base64.original.encode(bytes));
        expect([...base64.shim.decode(encoded)]).toEqual([...bytes]);
      }),
    );
    const chars = fc.constantFrom(...'ABCXYZabcxyz0189+/=-_ .%'.split(''));
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }), (cs) => {
        const s = cs.join('');
        expect(outcome(() => base64.shim.decode(s))).toEqual(outcome(() => base64.original.decode(s)));
      }),
      { numRuns: 2000 },
    );
    for (const s of ['', 'YQ', 'YQ==', 'YWI=', 'YWJj', 'YWJjZA', 'YWJjZ', 'YQ===', '=YWJ', 'YW=j', 'YWJj\n'])
      expect(
        outcome(() => base64.shim.decode(s)),
        s,
      ).toEqual(outcome(() => base64.original.decode(s)));
  });

  it('mnemonist/lru-cache: the same answers and evictions for any sequence of operations', () => {
    const original = require('mnemonist/lru-cache') as LruClass;
    const shim = require('../../infra/constructs/bundle-shims/lru-cache.cjs') as LruClass;
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
    const op = fc.oneof(
      fc.tuple(fc.constant('set' as const), key, fc.nat()),
      fc.tuple(fc.constantFrom('get' as const, 'peek' as const, 'has' as const), key, fc.constant(0)),
      fc.tuple(fc.constant('clear' as const), key, fc.constant(0)),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 40 }), (capacity, ops) => {
        const [a, b] = [new original(capacity), new shim(capacity)];
        for (const [name, k, v] of ops) {
          const run = (c: Lru) => (name === 'set' ? c.set(k, v) : name === 'clear' ? c.clear() : c[name](k));
          expect(run(b)).toEqual(run(a));
          expect(b.size).toBe(a.size);
        }
        for (const k of ['a', 'b', 'c', 'd', 'e']) expect(b.peek(k)).toEqual(a.peek(k));
      }),
    );
  });
});
