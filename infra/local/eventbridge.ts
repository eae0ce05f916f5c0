import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One entry of a PutEvents request, as the SDK sent it. */
export type PutEntry = {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Time?: number | string;
  EventBusName?: string;
  Resources?: string[];
};
/** One PutEvents request the endpoint received. */
export type PutRequest = { target: string; contentType: string; authorization: string; entries: PutEntry[] };

export type LocalEventBridgeOptions = {
  /** Told of each entry put (`npm start` logs a line for each). */
  onPut?: (entry: PutEntry) => void;
  /** Requests kept for `requests`, `entries()` and `GET /` (oldest dropped first; default: all). */
  keep?: number;
};

/**
 * EventBridge's PutEvents as AWS documents it (JSON 1.1 protocol: `POST /` with
 * `X-Amz-Target: AWSEvents.PutEvents`), on 127.0.0.1, recording every request. EventBridge has no
 * emulator; the production client is pointed here with `AWS_ENDPOINT_URL_EVENTBRIDGE`: the local
 * stack's default bus under `npm start` (`GET /` lists what was put, newest last) and the tests' listener.
 * - each entry is answered in order with `{ EventId }`, or `{ ErrorCode, ErrorMessage }` when
 *   `refuse(entry)` names an error code, and `FailedEntryCount` counts those;
 * - while `down` is above 0, a request is answered 500 `InternalException` (and `down` counts down);
 * - a request of more than 10 entries is refused whole (400 `ValidationException`), as AWS does.
 */
export async function startEventBridgeListener(opts: LocalEventBridgeOptions = {}) {
  const requests: PutRequest[] = [];
  const state = {
    refuse: (_entry: PutEntry): string | undefined => undefined,
    down: 0,
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify(json));
    };
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ entries: requests.flatMap((r) => r.entries) }, null, 2));
    }
    let body: { Entries?: PutEntry[] };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      return send(400, { __type: 'SerializationException', message: 'The request body is not JSON' });
    }
    const target = String(req.headers['x-amz-target'] ?? '');
    if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') return send(400, { __type: 'UnknownOperationException' });
    const entries = body.Entries ?? [];
    requests.push({
      target,
      contentType: String(req.headers['content-type'] ?? ''),
      authorization: String(req.headers.authorization ?? ''),
      entries,
    });
    if (opts.keep !== undefined && requests.length > opts.keep) requests.splice(0, requests.length - opts.keep);
    if (state.down > 0) {
      state.down--;
      return send(500, { __type: 'InternalException', message: 'Internal service error' });
    }
    if (entries.length < 1 || entries.length > 10)
      return send(400, { __type: 'ValidationException', message: `1 validation error detected: Entries has ${entries.length} members` });
    const results = entries.map((e) => {
      const code = state.refuse(e);
      if (!code) opts.onPut?.(e);
      return code ? { ErrorCode: code, ErrorMessage: `${code} (local EventBridge)` } : { EventId: randomUUID() };
    });
    send(200, { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    state,
    /** Every entry received, in order (refused ones too). */
    entries: () => requests.flatMap((r) => r.entries),
    reset() {
      requests.length = 0;
      state.refuse = () => undefined;
      state.down = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type EventBridgeListener = Awaited<ReturnType<typeof startEventBridgeListener>>;
