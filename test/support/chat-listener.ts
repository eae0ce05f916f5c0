import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';

/** One request the listener received: what Slack or Teams would have been sent. */
export type Received = { method: string; path: string; query: Record<string, string>; headers: Record<string, string>; body: any };

/**
 * Slack's Web API and a Teams Workflows webhook as their documentation describes them, on
 * 127.0.0.1, recording every request (Slack and Teams have no emulators):
 * - `POST /slack/chat.postMessage` (JSON, Bearer bot token): `{ ok, channel, ts, message }`; a
 *   `#name` is answered with a stable channel id, a user id (U…) with a DM id (D…);
 *   `invalid_auth` for a token ending in `bad`, `channel_not_found` for `#missing`.
 * - `POST /slack/chat.update`: `{ ok, channel, ts, text }`.
 * - `GET /slack/users.info?user=` and `GET /slack/users.lookupByEmail?email=`: from `users`
 *   (Slack user id → email), else `user_not_found` / `users_not_found`.
 * - `POST /teams/<any>`: 202 with an empty body (what a Workflows trigger answers); `/teams/fail` 500;
 *   `/teams/flaky…` 503 the first time; `/teams/down…` 404 (a deleted flow: final) until `healed` holds its path.
 *   A post to `#ratelimited…` is 429 (`Retry-After: 1`) the first time.
 * - `POST /respond/<any>` (an interaction's `response_url`): `{ ok: true }`.
 * - `POST /redirect/<any>?to=<url>`: 307 to `to` (a `response_url` that sends its post elsewhere).
 */
export async function startChatListener() {
  const received: Received[] = [];
  const users = new Map<string, string>();
  const healed = new Set<string>();
  let seq = 0;
  /** Paths (and Slack conversations) that already failed once: `/teams/flaky…` answers 500 once, `#ratelimited` 429 once. */
  const failedOnce = new Set<string>();
  const idOf = (prefix: string, s: string) => `${prefix}${createHash('sha256').update(s).digest('hex').slice(0, 9).toUpperCase()}`;
  const server = createServer(async (req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://listener');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* kept as text */
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    received.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body });
    const send = (status: number, json?: unknown) => {
      res.writeHead(status, json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' });
      res.end(json === undefined ? '' : JSON.stringify(json));
    };
    const method = url.pathname.replace(/^\/slack\//, '');
    if (url.pathname.startsWith('/slack/')) {
      if (!/^Bearer xox[bp]-/.test(headers.authorization ?? '') || headers.authorization?.endsWith('bad'))
        return send(200, { ok: false, error: 'invalid_auth' });
      if (method === 'chat.postMessage') {
        const to = String(body?.channel ?? '');
        if (to === '#missing' || !to) return send(200, { ok: false, error: 'channel_not_found' });
        if (to.startsWith('#ratelimited') && !failedOnce.has(to)) {
          failedOnce.add(to);
          res.writeHead(429, { 'retry-after': '1' });
          return res.end();
        }
        const channel = to.startsWith('#') ? idOf('C', to) : to.startsWith('U') ? idOf('D', to) : to;
        const ts = `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}`;
        return send(200, { ok: true, channel, ts, message: { text: body.text, blocks: body.blocks, ts } });
      }
      if (method === 'chat.update') return send(200, { ok: true, channel: body?.channel, ts: body?.ts, text: body?.text });
      if (method === 'users.info') {
        const email = users.get(url.searchParams.get('user') ?? '');
        return send(
          200,
          email ? { ok: true, user: { id: url.searchParams.get('user'), profile: { email } } } : { ok: false, error: 'user_not_found' },
        );
      }
      if (method === 'users.lookupByEmail') {
        const id = [...users].find(([, e]) => e === url.searchParams.get('email'))?.[0];
        return send(
          200,
          id ? { ok: true, user: { id, profile: { email: url.searchParams.get('email') } } } : { ok: false, error: 'users_not_found' },
        );
      }
      return send(200, { ok: false, error: 'unknown_method' });
    }
    if (url.pathname.startsWith('/teams/flaky') && !failedOnce.has(url.pathname)) {
      failedOnce.add(url.pathname);
      return send(503, { error: 'try later' });
    }
    if (url.pathname.startsWith('/teams/down') && !healed.has(url.pathname)) return send(404, { error: 'flow not found' });
    if (url.pathname.startsWith('/teams/')) return url.pathname === '/teams/fail' ? send(500, { error: 'boom' }) : send(202);
    if (url.pathname.startsWith('/respond/')) return send(200, { ok: true });
    if (url.pathname.startsWith('/redirect/')) {
      res.writeHead(307, { location: url.searchParams.get('to') ?? '/' });
      return res.end();
    }
    return send(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    /** SLACK_API_URL. */
    slackApi: `${base}/slack`,
    base,
    received,
    users,
    /** `/teams/down…` paths that answer again. */
    healed,
    /** What was received on one Slack method or path. */
    calls: (path: string) => received.filter((r) => r.path === path || r.path === `/slack/${path}`),
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
