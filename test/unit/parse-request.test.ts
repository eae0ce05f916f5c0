import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { bodyBytes } from '../../shared/http/middleware/body-limit.ts';
import { isJsonContentType, parseJsonBody } from '../../shared/http/middleware/parse-request.ts';

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');

const parseError = (body: string | undefined, isBase64Encoded: boolean): unknown => {
  try {
    parseJsonBody(body, isBase64Encoded);
  } catch (e) {
    return e;
  }
  return undefined;
};

describe('parseJsonBody', () => {
  it('treats an absent, empty or blank body as {}', () => {
    expect(parseJsonBody(undefined, false)).toEqual({});
    expect(parseJsonBody(undefined, true)).toEqual({});
    expect(parseJsonBody('', false)).toEqual({});
    expect(parseJsonBody('', true)).toEqual({});
    expect(parseJsonBody('   \n\t\r ', false)).toEqual({});
    expect(parseJsonBody(b64('  \n '), true)).toEqual({});
  });

  it('parses JSON object bodies, plain or base64-encoded', () => {
    expect(parseJsonBody('{"a":1,"b":[true,null,"x"]}', false)).toEqual({ a: 1, b: [true, null, 'x'] });
    expect(parseJsonBody(b64('{"name":"café ✓ 🔑"}'), true)).toEqual({ name: 'café ✓ 🔑' });
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 10 })), (v) => {
        const text = JSON.stringify(v);
        expect(parseJsonBody(text, false)).toEqual(JSON.parse(text));
        expect(parseJsonBody(b64(text), true)).toEqual(JSON.parse(text));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a body that is JSON but not an object with 400 BODY_NOT_OBJECT', () => {
    for (const body of ['  [1,2] ', '"str"', '42', 'null', 'true'])
      expect(parseError(body, false), body).toMatchObject({ kind: 'invalid', code: 'BODY_NOT_OBJECT' });
  });

  it('refuses nesting deeper than 64 levels with 400 VALIDATION_FAILED naming the path, at any depth', () => {
    const nested = (n: number, open: string, close: string) => `{"a":${open.repeat(n)}1${close.repeat(n)}}`;
    expect(parseJsonBody(nested(63, '[', ']'), false)).toBeTypeOf('object');
    for (const n of [64, 65, 6_000, 100_000]) {
      const e = parseError(nested(n, '[', ']'), false) as AppError;
      expect(e, String(n)).toMatchObject({ kind: 'invalid', code: 'VALIDATION_FAILED' });
      expect((e.extra.body as { errors: { path: string }[] }).errors[0]?.path).toBe(['a', ...Array(63).fill('0')].join('.'));
    }
    const objects = (n: number) => `${'{"k":'.repeat(n)}1${'}'.repeat(n)}`;
    expect(parseJsonBody(objects(64), false)).toBeTypeOf('object');
    expect(parseError(objects(65), false)).toMatchObject({ kind: 'invalid', code: 'VALIDATION_FAILED' });
  });

  it('does not base64-decode a body that is not flagged as base64', () => {
    // "e30=" is base64 for "{}", but unflagged it is just the (invalid JSON) text e30=.
    const e = parseError('e30=', false);
    expect(e).toBeInstanceOf(AppError);
    expect(parseJsonBody('e30=', true)).toEqual({});
  });

  it('refuses invalid JSON with a 400 INVALID_JSON AppError', () => {
    for (const [body, base64] of [
      ['{"email":', false],
      ['{a:1}', false],
      ["{'a':1}", false],
      ['undefined', false],
      ['{"a":1}}', false],
      ['NaN', false],
      [b64('{"a":'), true],
      [b64(new Uint8Array([0xff, 0xfe, 0x00])), true],
      ['{"a":1}', true], // not base64 text: decodes to junk
    ] as const) {
      const e = parseError(body, base64);
      expect(e, body).toBeInstanceOf(AppError);
      expect((e as AppError).kind).toBe('invalid');
      expect((e as AppError).code).toBe('INVALID_JSON');
      expect((e as AppError).message).not.toContain('Unexpected');
    }
  });

  it('for any body and base64 flag, either returns or throws a 400 AppError, nothing else', () => {
    const body = fc.oneof(
      fc.constant(undefined),
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)) }),
      fc.json(),
      fc.base64String(),
      fc.uint8Array().map((u) => b64(u)),
      fc.constantFrom(
        '['.repeat(100_000),
        `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`,
        `{"a":${'['.repeat(6_000)}${']'.repeat(6_000)}}`,
      ),
    );
    fc.assert(
      fc.property(body, fc.boolean(), (b, base64) => {
        const e = parseError(b, base64);
        if (e !== undefined) {
          expect(e).toBeInstanceOf(AppError);
          expect((e as AppError).kind).toBe('invalid');
          expect(['INVALID_JSON', 'BODY_NOT_OBJECT', 'VALIDATION_FAILED']).toContain((e as AppError).code);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('isJsonContentType', () => {
  it('accepts JSON media types, with or without parameters, in any case', () => {
    for (const ct of [
      undefined,
      'application/json',
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'Application/JSON',
      ' application/json ',
      'application/cloudevents+json',
      'application/problem+json',
      'application/vnd.api+json; charset=utf-8',
      'application/merge-patch+json',
    ]) {
      expect(isJsonContentType(ct), String(ct)).toBe(true);
    }
  });

  it('refuses other media types', () => {
    for (const ct of [
      'text/plain',
      'text/json',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      'application/json-seq',
      'application/octet-stream',
      'json',
      'application/',
      '',
      'application/json, text/plain',
      'x-application/json',
      'application/+json',
    ]) {
      expect(isJsonContentType(ct), ct).toBe(false);
    }
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ unit: 'binary' }), { nil: undefined }), (ct) => {
        expect(typeof isJsonContentType(ct)).toBe('boolean');
      }),
    );
  });
});

describe('bodyBytes', () => {
  it('counts an absent or empty body as 0', () => {
    expect(bodyBytes(undefined, false)).toBe(0);
    expect(bodyBytes(undefined, true)).toBe(0);
    expect(bodyBytes('', false)).toBe(0);
    expect(bodyBytes('', true)).toBe(0);
  });

  it('counts the bytes after base64 decoding', () => {
    expect(bodyBytes(b64('abc'), true)).toBe(3);
    expect(bodyBytes('YWJj', true)).toBe(3);
    expect(bodyBytes('YQ==', true)).toBe(1);
    expect(bodyBytes('YWI=', true)).toBe(2);
    expect(bodyBytes('YWJj', false)).toBe(4);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), (bytes) => {
        expect(bodyBytes(b64(bytes), true)).toBe(bytes.length);
      }),
      { numRuns: 300 },
    );
  });

  it('counts multi-byte UTF-8 text in bytes, not characters', () => {
    expect(bodyBytes('é', false)).toBe(2);
    expect(bodyBytes('✓', false)).toBe(3);
    expect(bodyBytes('🔑', false)).toBe(4);
    expect(bodyBytes('{"a":"é✓🔑"}', false)).toBe(17);
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(bodyBytes(s, false)).toBe(Buffer.from(s, 'utf8').length);
        expect(bodyBytes(b64(s), true)).toBe(Buffer.from(s, 'utf8').length);
      }),
      { numRuns: 300 },
    );
  });
});
