import { routes } from '../functions/routes.ts';
import { type Route, routeKey } from '../shared/http/route.ts';
import { type FunctionGrant, grantsOfRoute, pages } from './iam.ts';

/**
 * The functions of the route table: one per handler module. An API route's handler is its own (one
 * Lambda per endpoint); the console's pages share three (functions/route-kinds.ts `CONSOLE_FUNCTIONS`),
 * each of which gets what all of its pages need. The CDK stack (infra/constructs/api.ts) and the local
 * server (infra/local/server.ts) read the same specs, so the local stack enforces what AWS will.
 */
export type RouteFunctionSpec = {
  /** Module under `functions/` exporting `handler`. */
  handler: string;
  /** The routes it serves, in the table's order. */
  routes: readonly Route[];
  /** The union of its routes' grants (`grantsOfRoute`), each once, in the order first met. */
  grants: FunctionGrant[];
  /** The most any of its routes asks for; undefined: none asks (the stack's default). */
  memoryMb?: number;
  timeoutSeconds?: number;
  /** One of its routes pages: it signs and checks cursors (the cursor key's ARN). */
  pages: boolean;
};

const most = (xs: (number | undefined)[]) => {
  const set = xs.filter((x): x is number => x !== undefined);
  return set.length ? Math.max(...set) : undefined;
};

const cache = new WeakMap<readonly Route[], Map<string, RouteFunctionSpec>>();

/** Every function of `table`, by handler module. */
export function routeFunctions(table: readonly Route[] = routes): Map<string, RouteFunctionSpec> {
  const known = cache.get(table);
  if (known) return known;
  const byHandler = new Map<string, Route[]>();
  for (const r of table) byHandler.set(r.handler, [...(byHandler.get(r.handler) ?? []), r]);
  const specs = new Map<string, RouteFunctionSpec>();
  for (const [handler, rs] of byHandler) {
    const memoryMb = most(rs.map((r) => r.memoryMb));
    const timeoutSeconds = most(rs.map((r) => r.timeoutSeconds));
    specs.set(handler, {
      handler,
      routes: rs,
      grants: [...new Set(rs.flatMap(grantsOfRoute))],
      ...(memoryMb !== undefined && { memoryMb }),
      ...(timeoutSeconds !== undefined && { timeoutSeconds }),
      pages: rs.some(pages),
    });
  }
  cache.set(table, specs);
  return specs;
}

/** The function that serves `route` (a route of no table: a function of its own). */
export function functionOfRoute(route: Route, table: readonly Route[] = routes): RouteFunctionSpec {
  const spec = routeFunctions(table).get(route.handler);
  if (spec?.routes.some((r) => routeKey(r) === routeKey(route))) return spec;
  return routeFunctions([route]).get(route.handler) as RouteFunctionSpec;
}
