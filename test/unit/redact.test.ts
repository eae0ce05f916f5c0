import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redact, redactQuery, redactValues } from '../../shared/logger.ts';

const SECRET = 'S3CR3T-value';

describe('redact', () => {
  it('replaces sensitive fields at the top level, whatever their case', () => {
    expect(
      redact({
        authorization: `Bearer ${SECRET}`,
        'X-API-Key': SECRET,
        password: SECRET,
        api_key: SECRET,
        secretKey: SECRET,
        Cookie: SECRET,
        method: 'GET',
        n: 3,
        ok: true,
        nothing: null,
      }),
    ).toEqual({
      authorization: '[redacted]',
      'X-API-Key': '[redacted]',
      password: '[redacted]',
      api_key: '[redacted]',
      secretKey: '[redacted]',
      Cookie: '[redacted]',
      method: 'GET',
      n: 3,
      ok: true,
      nothing: null,
    });
  });

  it('redacts nested objects and arrays, leaving other values intact', () => {
    const input = {
      request: {
        headers: { Authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: { user: { password: SECRET, email: 'a@b.c' } },
      },
      items: [{ api_key: SECRET, name: 'k1' }, [{ secretKey: SECRET }], 'plain', 7],
      password: { nested: 'the whole value goes' },
    };
    const out = redact(input);
    expect(out).toEqual({
      request: {
        headers: { Authorization: '[redacted]', 'content-type': 'application/json' },
        body: { user: { password: '[redacted]', email: 'a@b.c' } },
      },
      items: [{ api_key: '[redacted]', name: 'k1' }, [{ secretKey: '[redacted]' }], 'plain', 7],
      password: '[redacted]',
    });
    // A copy: the input is untouched.
    expect(input.request.body.user.password).toBe(SECRET);
    expect(JSON.stringify(out)).not.toContain(SECRET);
  });

  it('redacts a sensitive field at any depth', () => {
    for (const depth of [1, 5, 8, 9, 10, 15, 30]) {
      let value: unknown = { password: SECRET, authorization: SECRET, 'x-api-key': SECRET, api_key: SECRET, secretKey: SECRET };
      for (let i = 0; i < depth; i++) value = i % 3 === 2 ? [value] : { level: i, inner: value };
      expect(JSON.stringify(redact(value)), `depth ${depth}`).not.toContain(SECRET);
    }
  });

  it('never leaks a sensitive value placed anywhere in an arbitrary structure', () => {
    const sensitiveKey = fc.constantFrom(
      'authorization',
      'Authorization',
      'x-api-key',
      'X-Api-Key',
      'password',
      'api_key',
      'apiKey',
      'secretKey',
      'token',
      'cookie',
    );
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.constant('LEAF'),
        fc.dictionary(
          fc.string().filter((k) => !/secret|password|token|key|auth|cookie/i.test(k)),
          tie('node'),
          { maxKeys: 3 },
        ),
        fc.array(tie('node'), { maxLength: 3 }),
      ),
    })).node;
    // Put the secret under a sensitive key in place of the first 'LEAF' (depth-first).
    const plant = (root: unknown, key: string) => {
      let planted = false;
      const walk = (v: unknown): unknown => {
        if (planted) return v;
        if (v === 'LEAF') {
          planted = true;
          return { [key]: SECRET };
        }
        if (Array.isArray(v)) return v.map(walk);
        if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
        return v;
      };
      const value = walk(root);
      return [value, planted] as const;
    };
    fc.assert(
      fc.property(tree, sensitiveKey, (t, key) => {
        const [value, planted] = plant(t, key);
        fc.pre(planted);
        const out = JSON.stringify(redact(value));
        expect(out).not.toContain(SECRET);
        expect(out).toContain('[redacted]');
      }),
      { numRuns: 300 },
    );
  });

  it('returns primitives unchanged', () => {
    for (const v of ['x', 1, 0, true, false, null, undefined]) expect(redact(v)).toBe(v);
  });

  it('keeps structures without sensitive keys equal to the input', () => {
    fc.assert(
      fc.property(
        fc
          .jsonValue({ maxDepth: 6 })
          .filter(
            (v) =>
              !JSON.stringify(v).match(
                /"(authorization|x-api-key|api_key|apikey|password|token|secret|secretkey|x-webhook-signature|cookie)":/i,
              ),
          ),
        (v) => {
          expect(redact(v)).toEqual(v);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('redactQuery', () => {
  it('replaces api_key values anywhere in the query string and keeps the rest', () => {
    expect(redactQuery(`api_key=${SECRET}`)).toBe('api_key=[redacted]');
    expect(redactQuery(`a=1&api_key=${SECRET}&b=2`)).toBe('a=1&api_key=[redacted]&b=2');
    expect(redactQuery(`a=1&b=2&api_key=${SECRET}`)).toBe('a=1&b=2&api_key=[redacted]');
    expect(redactQuery(`api_key=${SECRET}&api_key=other&x=y`)).toBe('api_key=[redacted]&api_key=[redacted]&x=y');
    expect(redactQuery(`API_KEY=${SECRET}`)).toBe('API_KEY=[redacted]');
    expect(redactQuery('api_key=')).toBe('api_key=[redacted]');
    expect(redactQuery(`token=${SECRET}&password=${SECRET}&secret=${SECRET}`)).toBe(
      'token=[redacted]&password=[redacted]&secret=[redacted]',
    );
  });

  it('does not touch parameters that merely contain the name', () => {
    expect(redactQuery('my_api_key=1&api_keys=2&x=api_key')).toBe('my_api_key=1&api_keys=2&x=api_key');
    expect(redactQuery('')).toBe('');
    expect(redactQuery('a=1&b=%20two')).toBe('a=1&b=%20two');
  });

  it('redacts a percent-encoded api_key name too (the server decodes names before reading api_key)', () => {
    expect(redactQuery(`api%5Fkey=${SECRET}`)).not.toContain(SECRET);
    expect(redactQuery(`a=1&api%5fkey=${SECRET}&b=2`)).not.toContain(SECRET);
    expect(redactQuery(`a=1&%61pi_key=${SECRET}`)).not.toContain(SECRET);
  });

  it('never leaks an api_key value wherever it sits among other parameters', () => {
    const param = fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/), fc.stringMatching(/^[A-Za-z0-9%._-]{0,12}$/))
      .filter(([k]) => !/^(api_key|token|password|secret)$/i.test(k))
      .map(([k, v]) => `${k}=${v}`);
    const secret = fc.stringMatching(/^dyk_[0-9a-z]{26}_[0-9A-Za-z]{49}$/);
    fc.assert(
      fc.property(fc.array(param, { maxLength: 5 }), fc.array(param, { maxLength: 5 }), secret, (before, after, s) => {
        const q = [...before, `api_key=${s}`, ...after].join('&');
        const out = redactQuery(q);
        expect(out).not.toContain(s);
        expect(out).toBe([...before, 'api_key=[redacted]', ...after].join('&'));
      }),
      { numRuns: 300 },
    );
  });
});

describe('redactValues (account secret values a run used)', () => {
  const TOKEN = 'sk_live_"tok/en"&x=1';

  it('replaces every occurrence in strings and keys at any depth, as given, JSON-escaped and URL-encoded', () => {
    const input = {
      status: 200,
      headers: { 'x-echo': `Bearer ${TOKEN}`, [TOKEN]: 'as a key' },
      body: {
        raw: `${TOKEN}${TOKEN}`,
        escaped: JSON.stringify({ t: TOKEN }),
        url: `https://h.test/?t=${encodeURIComponent(TOKEN)}`,
        list: [[{ deep: [TOKEN] }], 7, null, true],
      },
    };
    const out = redactValues(input, [TOKEN]);
    expect(out).toEqual({
      status: 200,
      headers: { 'x-echo': 'Bearer [redacted]', '[redacted]': 'as a key' },
      body: {
        raw: '[redacted][redacted]',
        escaped: '{"t":"[redacted]"}',
        url: 'https://h.test/?t=[redacted]',
        list: [[{ deep: ['[redacted]'] }], 7, null, true],
      },
    });
    expect(input.body.raw).toBe(`${TOKEN}${TOKEN}`); // a copy
  });

  it('replaces the base64, JSON \\u-escaped and before-# forms a server may echo', () => {
    const v = 'pässwörd-7Hk2#frag';
    const b64 = Buffer.from(v).toString('base64');
    const allU = v
      .split('')
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join('');
    const echoed = {
      basic: `Basic ${b64}`,
      unpadded: b64.replace(/=+$/, ''),
      url: Buffer.from(v).toString('base64url'),
      ascii: JSON.stringify(v).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`),
      everyChar: allU,
      path: `/x?k=${v.split('#')[0]}`,
    };
    const out = JSON.stringify(redactValues(echoed, [v]));
    for (const form of [b64, b64.replace(/=+$/, ''), Buffer.from(v).toString('base64url'), allU, 'pässwörd-7Hk2', 'p\\u00E4'])
      expect(out).not.toContain(form);
    expect(out.match(/\[redacted\]/g)?.length).toBe(6);
  });

  it('replaces a value that contains another whole, and never rewrites what it put in', () => {
    expect(redactValues('abc-abcdef', ['abc', 'abcdef'])).toBe('[redacted]-[redacted]');
    expect(redactValues('x red y', ['red', 'redacted'])).toBe('x [redacted] y');
    expect(redactValues('a.c abc', ['a.c'])).toBe('[redacted] abc'); // a value is text, not a pattern
    expect(redactValues({ a: 'plain' }, [])).toEqual({ a: 'plain' });
    expect(redactValues('plain', [''])).toBe('plain');
  });

  it('leaves no string or key holding any of the values, whatever the values and wherever they sit', () => {
    // Characters outside the marker's, so what is left can be searched plainly.
    const value = fc.stringMatching(/^[A-Z0-9"\\/&%=+ é-]{1,12}$/);
    const strings = (v: unknown): string[] =>
      typeof v === 'string'
        ? [v]
        : Array.isArray(v)
          ? v.flatMap(strings)
          : v && typeof v === 'object'
            ? Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)])
            : [];
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 3 }), fc.jsonValue(), fc.string(), (values, json, filler) => {
        const planted = { json, at: values.map((v) => `${filler}${v}${filler}`), [values.join(filler)]: JSON.stringify(values) };
        for (const s of strings(redactValues(planted, values))) for (const v of values) expect(s).not.toContain(v);
      }),
      { numRuns: 300 },
    );
  });
});
