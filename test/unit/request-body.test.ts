import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { fieldErrors } from '../../shared/http/middleware/parse-request.ts';
import { closed, isConsoleRoute, requestBody } from '../../shared/http/request-body.ts';
import type { Route } from '../../shared/http/route.ts';

const errorsOf = (s: z.ZodType, v: unknown) => {
  const r = s.safeParse(v);
  return r.success ? [] : fieldErrors(r.error);
};

describe('closed', () => {
  const Leaf = z.string().min(2);
  const Schema = z
    .object({
      a: Leaf,
      inner: z.object({ b: z.number() }).optional(),
      list: z.array(z.object({ c: z.boolean() })).default([]),
      either: z.union([z.object({ kind: z.literal('x') }), z.object({ kind: z.literal('y'), y: z.number() })]).optional(),
      loose: z.looseObject({ d: z.number() }).optional(),
      map: z.record(z.string(), z.object({ e: z.number() })).optional(),
    })
    .refine((v) => v.a !== 'no', 'not no');
  const strict = closed(Schema);

  it('refuses unknown keys at every depth, each named at its own path', () => {
    expect(errorsOf(strict, { a: 'ok', typo: 1 })).toEqual([{ path: 'typo', message: 'unrecognized key "typo"' }]);
    expect(errorsOf(strict, { a: 'ok', inner: { b: 1, x: 2 } })).toEqual([{ path: 'inner.x', message: 'unrecognized key "x"' }]);
    expect(errorsOf(strict, { a: 'ok', list: [{ c: true }, { c: false, z: 0 }] })).toEqual([
      { path: 'list.1.z', message: 'unrecognized key "z"' },
    ]);
    expect(errorsOf(strict, { a: 'ok', map: { k: { e: 1, f: 2 } } })).toEqual([{ path: 'map.k.f', message: 'unrecognized key "f"' }]);
    expect(strict.safeParse({ a: 'ok', either: { kind: 'x', extra: 1 } }).success).toBe(false);
  });

  it('keeps what the schema accepted, its refinements, its loose objects and its leaves', () => {
    const value = { a: 'ok', inner: { b: 1 }, list: [{ c: true }], either: { kind: 'y', y: 2 }, loose: { d: 1, more: 'kept' } };
    expect(strict.parse(value)).toEqual(Schema.parse(value));
    expect(strict.safeParse({ a: 'no' }).success).toBe(false);
    expect(strict.safeParse({ a: 'x' }).success).toBe(false);
    // The original still strips unknown keys.
    expect(Schema.parse({ a: 'ok', typo: 1 })).toEqual({ a: 'ok', list: [] });
  });
});

describe('requestBody', () => {
  const all = routes as readonly Route[];
  it('closes the bodies of the console routes only; v1 and the public trigger and approval endpoints ignore unknown fields', () => {
    const withBody = all.filter((r) => r.body);
    expect(withBody.filter(isConsoleRoute).map((r) => r.path)).toEqual(expect.arrayContaining(['/api/webhooks', '/api/auth/login']));
    expect(withBody.filter((r) => !isConsoleRoute(r)).map((r) => r.path)).toContain('/api/webhooks/{webhookId}/trigger');
    for (const r of withBody) {
      const open = r.path.startsWith('/api/v1/') || r.auth.kind === 'apiKey' || r.auth.kind === 'webhook';
      expect(isConsoleRoute(r), r.path).toBe(!open);
      if (open) expect(requestBody(r), r.path).toBe(r.body);
      // Closed: its top-level object (each option of a union of objects) refuses unknown keys (whether it was strict already or made so).
      else {
        const def = (requestBody(r) as z.ZodType)._zod.def as { options?: z.ZodObject[] };
        for (const o of def.options ?? [requestBody(r) as z.ZodObject])
          expect((o._zod.def.catchall as z.ZodType | undefined)?._zod.def.type, r.path).toBe('never');
      }
      expect(requestBody(r), r.path).toBe(requestBody(r));
    }
  });
});
