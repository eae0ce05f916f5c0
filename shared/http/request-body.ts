import * as z from 'zod';
import type { Route } from './route.ts';

/**
 * Console routes: those an administrator's console calls (a session, or login), i.e. outside the open
 * platform (`/api/v1/`) and not the trigger and approval endpoints that external systems call with a key or a signature.
 */
export const isConsoleRoute = (r: Pick<Route, 'path' | 'auth'>) =>
  !r.path.startsWith('/api/v1/') && r.auth.kind !== 'apiKey' && r.auth.kind !== 'webhook';

type Def = Record<string, unknown> & { type: string };
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;
const rebuild = (s: z.ZodType, def: Def) => s.clone(def as never) as z.ZodType;

/**
 * `schema` with every object that drops unknown keys (zod's default) made strict, however deep:
 * through optional/nullable/default wrappers, arrays, records, unions and pipes. Objects that keep
 * unknown keys on purpose (`looseObject`, a `catchall`) stay as they are; the leaves (ids, strings...)
 * are the same instances, so what is registered on them (id kinds, metadata) still applies.
 */
export function closed(schema: z.ZodType, seen = new Map<z.ZodType, z.ZodType>()): z.ZodType {
  const done = seen.get(schema);
  if (done) return done;
  const def = defOf(schema);
  const sub = (s: unknown) => closed(s as z.ZodType, seen);
  let out: z.ZodType;
  switch (def.type) {
    case 'object': {
      const given = def.shape as Record<string, z.ZodType>;
      const shape = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, sub(v)]));
      // Already closed (or loose on purpose) with nothing changed inside: the same instance, so its identity holds.
      const same = def.catchall !== undefined && Object.entries(shape).every(([k, v]) => v === given[k]);
      out = same ? schema : rebuild(schema, { ...def, shape, catchall: def.catchall ?? z.never() });
      break;
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
      out = sub(def.innerType) === def.innerType ? schema : rebuild(schema, { ...def, innerType: sub(def.innerType) });
      break;
    case 'array':
      out = sub(def.element) === def.element ? schema : rebuild(schema, { ...def, element: sub(def.element) });
      break;
    case 'record':
      out = rebuild(schema, { ...def, valueType: sub(def.valueType) });
      break;
    case 'union':
      out = rebuild(schema, { ...def, options: (def.options as z.ZodType[]).map(sub) });
      break;
    case 'pipe':
      out = rebuild(schema, { ...def, in: sub(def.in) });
      break;
    default:
      out = schema;
  }
  seen.set(schema, out);
  return out;
}

const bodies = new WeakMap<Route, z.ZodType | undefined>();

/**
 * The schema a route's request body is checked against (and documented with): console routes refuse
 * unknown fields (400 `VALIDATION_FAILED` naming each), so a typo never changes what an administrator's
 * request means; the v1 routes and the triggers ignore them, as external systems of a newer version may send more.
 */
export function requestBody(r: Route): z.ZodType | undefined {
  if (!r.body || !isConsoleRoute(r)) return r.body;
  if (!bodies.has(r)) bodies.set(r, closed(r.body));
  return bodies.get(r);
}
