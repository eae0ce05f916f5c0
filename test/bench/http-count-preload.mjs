// Loaded into the local stack under test by `npm run bench -- load` (NODE_OPTIONS=--import <this file>),
// so it must work with any commit's code: plain JavaScript, no imports from the project. It counts the
// process's outgoing HTTP requests (the AWS SDK's calls to the emulators) by service and operation,
// with the bytes each sent and received on its socket (headers included), through Node's
// diagnostics channels, which see every `node:http` ClientRequest however it was made.
//
// It also keeps the number of requests to the stack's own server still in flight.
//
// On SIGUSR2, and at exit, it writes the totals to `$FLOWGATE_BENCH_COUNTS/counts-<pid>.json`
// (written to a temporary name and renamed, so a reader never sees half a file); `seq` grows with
// each write, so the bench knows its request was answered.
import dc from 'node:diagnostics_channel';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.FLOWGATE_BENCH_COUNTS;
if (dir) {
  /** service → operation → { n, sent, received } */
  const totals = {};
  let seq = 0;
  const kinds = new WeakMap();
  const seen = new WeakMap();

  /** The emulators' host:port, from the environment the stack gives its SDK clients. */
  const endpointOf = (name) => {
    const url = process.env[name];
    if (!url) return undefined;
    try {
      return new URL(url).host;
    } catch {
      return undefined;
    }
  };
  const serviceOf = (target, host) => {
    if (target?.startsWith('DynamoDB_')) return 'dynamodb';
    if (target?.startsWith('AmazonSQS.')) return 'sqs';
    if (host === endpointOf('AWS_ENDPOINT_URL_DYNAMODB')) return 'dynamodb';
    if (host === endpointOf('AWS_ENDPOINT_URL_SQS')) return 'sqs';
    if (host === endpointOf('AWS_ENDPOINT_URL_S3')) return 's3';
    return 'other';
  };
  const S3_OPS = { GET: 'GetObject', PUT: 'PutObject', HEAD: 'HeadObject', DELETE: 'DeleteObject', POST: 'PostObject' };

  dc.subscribe('http.client.request.created', ({ request }) => {
    const target = request.getHeader('x-amz-target');
    const host = String(request.getHeader('host') ?? `${request.host}`);
    const service = serviceOf(typeof target === 'string' ? target : undefined, host);
    const kind = { service, op: typeof target === 'string' ? target.slice(target.indexOf('.') + 1) : undefined };
    if (!kind.op && service === 's3') kind.op = S3_OPS[request.method] ?? request.method;
    if (!kind.op) {
      // The query protocol (older SDKs' SQS) names the operation in the form body: `Action=SendMessage&...`.
      kind.op = request.method;
      const sniff = (chunk) => {
        const m = /(?:^|&)Action=([A-Za-z]+)/.exec(
          typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('latin1', 0, 512) : '',
        );
        if (m) kind.op = m[1];
      };
      const { write, end } = request;
      request.write = function (chunk, ...rest) {
        if (chunk) sniff(chunk);
        return write.call(this, chunk, ...rest);
      };
      request.end = function (chunk, ...rest) {
        if (chunk && typeof chunk !== 'function') sniff(chunk);
        return end.call(this, chunk, ...rest);
      };
    }
    kinds.set(request, kind);
  });

  // Published when the response's headers arrived; its bytes are counted when its body has ended.
  // A keep-alive socket carries one exchange at a time, so the socket's counters since its last
  // exchange are this one's.
  dc.subscribe('http.client.response.finish', ({ request, response }) => {
    const kind = kinds.get(request);
    const socket = response.socket ?? request.socket;
    if (!kind || !socket) return;
    const count = () => {
      const last = seen.get(socket) ?? { w: 0, r: 0 };
      const now = { w: socket.bytesWritten, r: socket.bytesRead };
      seen.set(socket, now);
      totals[kind.service] ??= {};
      totals[kind.service][kind.op] ??= { n: 0, sent: 0, received: 0 };
      const t = totals[kind.service][kind.op];
      t.n += 1;
      t.sent += now.w - last.w;
      t.received += now.r - last.r;
    };
    response.once('end', count);
  });

  // Requests the stack's own server (on $PORT) has not answered or dropped yet: the bench's drain waits
  // for none, as a request autocannon stopped waiting for may still start a run. (The in-process
  // emulators' servers listen on other ports.)
  let serverInFlight = 0;
  dc.subscribe('http.server.request.start', ({ request, response }) => {
    if (request.socket?.localPort !== Number(process.env.PORT)) return;
    serverInFlight += 1;
    response.once('close', () => {
      serverInFlight -= 1;
    });
  });

  const write = () => {
    seq += 1;
    const file = join(dir, `counts-${process.pid}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify({ pid: process.pid, seq, at: Date.now(), serverInFlight, totals }));
    renameSync(`${file}.tmp`, file);
  };
  process.on('SIGUSR2', write);
  process.on('exit', write);
}
