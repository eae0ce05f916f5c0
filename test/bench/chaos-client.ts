// The chaos soak's client (test/bench/chaos.ts): the public API as a careful client calls it under
// faults (retrying what failed, with an Idempotency-Key where a retry could start work twice), every
// answer recorded; and the listener the runs' http_request and wait_for_callback steps call.
import { createServer } from 'node:http';

export type Answer = { status: number; headers: Headers; text: string; json: any };

/** Every answer the soak got, and each 5xx: where, what, and whether a fault explains it. */
export type AnswerLog = {
  byStatus: Record<string, number>;
  /** API Gateway's own 500 `{"message":…}`: the function crashed or timed out (lambda.* faults). */
  gateway5xx: number;
  /** A function's 503 with `Retry-After` (a fault it could not get past). */
  unavailable503: number;
  /** Any other 5xx: what must not happen. */
  other5xx: { route: string; status: number; body: string }[];
  retries: number;
};

export const newAnswerLog = (): AnswerLog => ({ byStatus: {}, gateway5xx: 0, unavailable503: 0, other5xx: [], retries: 0 });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type CallInit = {
  method?: string;
  key?: string;
  token?: string;
  cookie?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  /** Statuses that are an answer, not a failure to retry (default: below 500, but 429). */
  final?: (status: number) => boolean;
};

/** A client of one stack: each call retried (up to 10 tries, backing off, Retry-After honoured up to 3 s) while it fails with a 5xx, a 429 or no answer. */
export function client(base: string, log: AnswerLog) {
  return async function call(path: string, init: CallInit = {}): Promise<Answer> {
    const route = `${init.method ?? (init.json || init.form ? 'POST' : 'GET')} ${path.replace(/[?].*$/, '').replace(/\/(ex|ap|cb|wf|wh|sch)_[\w-]+/g, '/{id}')}`;
    for (let attempt = 1; ; attempt++) {
      let res: Answer | undefined;
      try {
        const r = await fetch(`${base}${path}`, {
          method: init.method ?? (init.json !== undefined || init.form ? 'POST' : 'GET'),
          redirect: 'manual',
          headers: {
            ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
            ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
            ...(init.cookie ? { cookie: init.cookie, origin: base } : {}),
            ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            ...(init.idempotencyKey ? { 'idempotency-key': init.idempotencyKey } : {}),
            ...init.headers,
          },
          body: init.json !== undefined ? JSON.stringify(init.json) : init.form ? new URLSearchParams(init.form).toString() : undefined,
        });
        const text = await r.text();
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        res = { status: r.status, headers: r.headers, text, json };
      } catch {
        res = undefined;
      }
      if (res) {
        log.byStatus[res.status] = (log.byStatus[res.status] ?? 0) + 1;
        if (res.status >= 500) {
          const gateway = res.headers.get('content-type') === 'application/json' && /^\{"message":"[^"]*"\}$/.test(res.text);
          if (gateway) log.gateway5xx++;
          else if (res.status === 503 && res.headers.get('retry-after')) log.unavailable503++;
          else log.other5xx.push({ route, status: res.status, body: res.text.slice(0, 300) });
        }
      }
      const retry = !res || res.status >= 500 || (res.status === 429 && !init.final?.(429));
      if (!retry || attempt >= 10) {
        if (!res) throw new Error(`${route}: no answer after ${attempt} tries`);
        return res;
      }
      log.retries++;
      const after = Number(res?.headers.get('retry-after'));
      await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, 3) * 1000 : Math.min(2000, 100 * 2 ** attempt));
    }
  };
}

/**
 * The runs' target on 127.0.0.1: `/hit/<anything>` counts the request by its path and answers
 * `{"ok":true}`; `/capture/<executionId>` keeps the JSON body (a callback's url and token).
 */
export async function startListener() {
  const hits = new Map<string, number>();
  const captured = new Map<string, { url: string; token: string }>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      if (path.startsWith('/capture/')) {
        try {
          captured.set(path.slice('/capture/'.length), JSON.parse(Buffer.concat(chunks).toString()));
        } catch {
          // not a callback's body: ignored
        }
      } else hits.set(path, (hits.get(path) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    captured,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
