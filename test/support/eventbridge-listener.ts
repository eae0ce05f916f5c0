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
/** One PutEvents request the listener received. */
export type PutRequest = { target: string; contentType: string; authorization: string; entries: PutEntry[] };

/**
 * EventBridge's PutEvents as AWS documents it (JSON 1.1 protocol: `POST /` with
 * `X-Amz-Target: AWSEvents.PutEvents`), on 127.0.0.1, recording every request (EventBridge has no
 * emulator; the production client is pointed here with `AWS_ENDPOINT_URL_EVENTBRIDGE`):
 * - each entry is answered in order with `{ EventId }`, or `{ ErrorCode, ErrorMessage }` when
 *   `refuse(entry)` names an error code, and `FailedEntryCount` counts those;
 * - while `down` is above 0, a request is answered 500 `InternalException` (and `down` counts down);
 * - a request of more than 10 entries is refused whole (400 `ValidationException`), as AWS does.
 */
export async function startEventBridgeListener() {
  const requests: PutRequest[] = [];
  const state = {
    refuse: (_entry: PutEntry): string | undefined => undefined,
    down: 0,
  };
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { Entries?: PutEntry[] };
    const target = String(req.headers['x-amz-target'] ?? '');
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
      res.end(JSON.stringify(json));
    };
    if (req.method !== 'POST' || target !== 'AWSEvents.PutEvents') return send(400, { __type: 'UnknownOperationException' });
    const entries = body.Entries ?? [];
    requests.push({
      target,
      contentType: String(req.headers['content-type'] ?? ''),
      authorization: String(req.headers.authorization ?? ''),
      entries,
    });
    if (state.down > 0) {
      state.down--;
      return send(500, { __type: 'InternalException', message: 'Internal service error' });
    }
    if (entries.length < 1 || entries.length > 10)
      return send(400, { __type: 'ValidationException', message: `1 validation error detected: Entries has ${entries.length} members` });
    const results = entries.map((e) => {
      const code = state.refuse(e);
      return code ? { ErrorCode: code, ErrorMessage: `${code} (test listener)` } : { EventId: randomUUID() };
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
