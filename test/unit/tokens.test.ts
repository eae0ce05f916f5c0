import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashToken, mintToken, parseToken, safeEqual, type TokenPrefix } from '../../shared/tokens.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_SHAPE = /^(dyk|dys)_[0-9a-z]{26}_[0-9A-Za-z]{49}$/;

/** Key and session ids: a lower-case ULID (26 characters of [0-9a-z]). */
const tokenId = fc.stringMatching(/^[0-9a-z]{26}$/);
const prefix = fc.constantFrom<TokenPrefix>('dyk', 'dys');
/** Any UTF-16 code unit, lone surrogates included: what a JS string can really hold. */
const codeUnits = (maxLength = 64) => fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)), maxLength });
/** Characters a careless edit might put in a token, the token alphabet among them. */
const tokenishChar = fc.oneof(fc.constantFrom(...`${BASE62}_-. `.split('')), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));

describe('mintToken / parseToken', () => {
  it('mints tokens of the documented shape that parse back with their id', () => {
    fc.assert(
      fc.property(prefix, tokenId, (p, id) => {
        const token = mintToken(p, id);
        expect(token).toMatch(TOKEN_SHAPE);
        expect(token.startsWith(`${p}_${id}_`)).toBe(true);
        expect(parseToken(token, p)).toEqual({ prefix: p, id, token });
      }),
      { numRuns: 200 },
    );
  });

  it('mints a different secret every time for the same id', () => {
    const id = '01jabcdefghjkmnpqrstvwxyz0';
    const tokens = new Set(Array.from({ length: 50 }, () => mintToken('dyk', id)));
    expect(tokens.size).toBe(50);
  });

  it('refuses a token with any single character changed (checksum)', () => {
    fc.assert(
      fc.property(prefix, tokenId, fc.nat(), tokenishChar, (p, id, pos, ch) => {
        const token = mintToken(p, id);
        const i = pos % token.length;
        fc.pre(token[i] !== ch);
        const changed = token.slice(0, i) + ch + token.slice(i + 1);
        expect(parseToken(changed, p)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses every character position changed to every other base62 character', () => {
    const token = mintToken('dyk', '01jabcdefghjkmnpqrstvwxyz0');
    for (let i = 0; i < token.length; i++) {
      for (const ch of BASE62) {
        if (token[i] === ch) continue;
        expect(parseToken(token.slice(0, i) + ch + token.slice(i + 1), 'dyk'), `position ${i} -> ${ch}`).toBeUndefined();
      }
    }
  });

  it('refuses truncated and extended tokens', () => {
    fc.assert(
      fc.property(prefix, tokenId, fc.nat(), (p, id, n) => {
        const token = mintToken(p, id);
        expect(parseToken(token.slice(0, n % token.length), p)).toBeUndefined();
        expect(parseToken(token.slice(1 + (n % (token.length - 1))), p)).toBeUndefined();
      }),
      { numRuns: 300 },
    );
    const token = mintToken('dys', '01jabcdefghjkmnpqrstvwxyz0');
    expect(parseToken(`${token}0`, 'dys')).toBeUndefined();
    expect(parseToken(` ${token}`, 'dys')).toBeUndefined();
    expect(parseToken(`${token}\n`, 'dys')).toBeUndefined();
  });

  it('refuses a valid token of the other kind', () => {
    fc.assert(
      fc.property(tokenId, (id) => {
        expect(parseToken(mintToken('dys', id), 'dyk')).toBeUndefined();
        expect(parseToken(mintToken('dyk', id), 'dys')).toBeUndefined();
        // The prefix is covered by the checksum: renaming it does not make a valid token either.
        expect(parseToken(mintToken('dys', id).replace(/^dys/, 'dyk'), 'dyk')).toBeUndefined();
      }),
      { numRuns: 100 },
    );
  });

  it('refuses ids that are not lower-case base36 of 26 characters', () => {
    for (const id of ['01JABCDEFGHJKMNPQRSTVWXYZ0', 'short', '01jabcdefghjkmnpqrstvwxyz0a', 'a_b']) {
      expect(parseToken(mintToken('dyk', id), 'dyk'), id).toBeUndefined();
    }
  });

  it('never throws for arbitrary input and accepts nothing random', () => {
    const inputs = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      codeUnits(),
      fc.string({ minLength: 90, maxLength: 5000 }),
      fc.tuple(prefix, fc.string({ unit: fc.constantFrom(...`${BASE62}_`.split('')), maxLength: 120 })).map(([p, s]) => `${p}_${s}`),
    );
    fc.assert(
      fc.property(inputs, prefix, (s, p) => {
        expect(parseToken(s, p)).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
    for (const s of ['', '_', 'dyk_', 'dyk__', 'x'.repeat(1_000_000), `dyk_${'a'.repeat(26)}_${'A'.repeat(49)}`]) {
      expect(parseToken(s, 'dyk')).toBeUndefined();
    }
  });
});

describe('safeEqual', () => {
  it('never throws for arbitrary pairs and is true exactly for equal strings', () => {
    const surrogates = fc.string({
      unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
      minLength: 1,
      maxLength: 2,
    });
    const str = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), codeUnits(8), surrogates);
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(safeEqual(a, b)).toBe(a === b);
      }),
      { numRuns: 1000 },
    );
  });

  it('is true for equal strings of any content', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), codeUnits()), (s) => {
        expect(safeEqual(s, `${s}`)).toBe(true);
      }),
    );
  });

  it('tells apart strings of the same length and strings that are prefixes of each other', () => {
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', 'a')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual(hashToken('a'), hashToken('b'))).toBe(false);
  });

  it('tells apart different lone surrogates (UTF-8 would turn both into U+FFFD)', () => {
    expect(safeEqual('\ud800', '\udc00')).toBe(false);
    expect(safeEqual('x\ud800y', 'x\udfffy')).toBe(false);
    expect(safeEqual('\ud800', '\ud800')).toBe(true);
  });
});

describe('hashToken', () => {
  it('is a deterministic SHA-256 hex digest', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const t = mintToken('dyk', '01jabcdefghjkmnpqrstvwxyz0');
    expect(hashToken(t)).toBe(hashToken(t));
    expect(hashToken(t)).not.toContain(t.split('_')[2]);
  });
});
