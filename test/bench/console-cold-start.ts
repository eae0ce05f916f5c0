import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { routes } from '../../functions/routes.ts';
import { type Route, routeKey } from '../../shared/http/route.ts';
import { bundle, emptyHandler, KIB } from './bundles.ts';
import { importInstructions } from './cold-start.ts';

/**
 * The console's cold starts (docs/performance.md "The console's cold starts"): how many distinct
 * functions a typical console session touches, when each page was a Lambda of its own and now that
 * the pages share three; and each one's import cost (callgrind instructions, repeatable on a busy
 * machine), from which its INIT is estimated against the trigger's measured INIT.
 */

/** A person's half hour in the console: sign in, the runs, one run, an approval decided, a workflow edited, sign out. */
export const TYPICAL_SESSION = [
  'GET /console/login',
  'POST /console/login',
  'GET /console',
  'GET /console/runs',
  'GET /console/runs/{executionId}',
  'GET /console/approvals',
  'GET /console/approvals/{approvalId}',
  'POST /console/approvals/{approvalId}',
  'GET /console/runs/{executionId}',
  'GET /console/workflows',
  'GET /console/workflows/{workflowId}',
  'GET /console/workflows/{workflowId}/edit',
  'POST /console/workflows/{workflowId}/edit',
  'POST /console/logout',
] as const;

/** The trigger's INIT as docs/performance.md measures it (`initTimes`, a fresh process until the bundle is imported, quiet machine). */
export const TRIGGER_INIT_MS = 180;

const routeOf = (key: string) => (routes as readonly Route[]).find((r) => routeKey(r) === key) as Route;

/** Each console page's module (`http/console/runs/run`), by route key: the loader beside the route entry, a function of its own before. */
export async function pageModules(): Promise<(key: string) => string> {
  const root = join(import.meta.dirname, '../../functions');
  const byKey = new Map<string, string>();
  for (const entry of readdirSync(join(root, 'http/console'), { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.route.ts')) continue;
    const { route } = (await import(/* @vite-ignore */ join(root, 'http/console', entry))) as { route: Route };
    byKey.set(routeKey(route), `http/console/${entry.replace(/\.route\.ts$/, '')}`);
  }
  return (key) => byKey.get(key) ?? key;
}

/** The functions the session touches: each page's own (as before), and its console function (now). */
export function sessionFunctions(pageOf: (key: string) => string) {
  const before = new Set(TYPICAL_SESSION.map(pageOf));
  const now = new Set(TYPICAL_SESSION.map((k) => routeOf(k).handler));
  return { before: [...before], now: [...now] };
}

export async function consoleColdStart(pageOf: (key: string) => string) {
  const { before, now } = sessionFunctions(pageOf);
  const empty = importInstructions((await emptyHandler()).file);
  const trigger = importInstructions((await bundle('http/webhooks/trigger')).file) - empty;
  const measure = async (handler: string) => {
    const b = await bundle(handler);
    const over = importInstructions(b.file) - empty;
    return {
      function: handler,
      KiB: Math.round(b.bytes / KIB),
      instructionsM: Math.round(over / 1e6),
      initMs: Math.round((TRIGGER_INIT_MS * over) / trigger),
    };
  };
  const rowsNow = [];
  for (const f of ['http/console/read', 'http/console/change', 'http/console/secrets']) rowsNow.push(await measure(f));
  const rowsBefore = [];
  for (const f of before) rowsBefore.push(await measure(f));
  const sum = (rows: { function: string; initMs: number }[], fns: string[]) =>
    rows.filter((r) => fns.includes(r.function)).reduce((n, r) => n + r.initMs, 0);
  return {
    triggerInstructionsM: Math.round(trigger / 1e6),
    rowsNow,
    rowsBefore,
    session: {
      pageViews: TYPICAL_SESSION.length,
      functionsBefore: before.length,
      functionsNow: now.length,
      coldInitMsBefore: sum(rowsBefore, before),
      coldInitMsNow: sum(rowsNow, now),
    },
  };
}
