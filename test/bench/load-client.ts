// The load generator of `load.ts`, in a process of its own so it does not share the local stack's
// event loop: reads a LoadSpec (JSON) on stdin, runs autocannon, writes a LoadResult (JSON) on stdout.
import autocannon from 'autocannon';

export type LoadSpec = {
  url: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  connections: number;
  /** Run for this many seconds ... */
  seconds?: number;
  /** ... or send this many requests ... */
  amount?: number;
  /** ... or send exactly one request per body, each body once (approvals: one decision each). */
  bodies?: string[];
  body?: string;
};

export type LoadResult = {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** CPU milliseconds this process spent on the load (user + system, all threads; its start-up not included). */
  cpuMs: number;
};

const spec = JSON.parse(await new Response(process.stdin as never).text()) as LoadSpec;
const bodies = spec.bodies;
let next = 0;
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  ...(bodies ? { amount: bodies.length } : spec.amount ? { amount: spec.amount } : { duration: spec.seconds ?? 5 }),
  requests: [
    {
      method: spec.method,
      path: spec.path,
      headers: spec.headers,
      ...(spec.body !== undefined ? { body: spec.body } : {}),
      ...(bodies ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++ % bodies.length] }) } : {}),
    },
  ],
});
const cpu = process.cpuUsage(cpuBefore);
const statusCodes = Object.fromEntries(
  Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, (s as { count?: number }).count ?? 0]),
);
const out: LoadResult = {
  requests: result.requests.total,
  seconds: result.duration,
  rps: Math.round(result.requests.total / result.duration),
  p50: result.latency.p50,
  p99: result.latency.p99,
  max: result.latency.max,
  errors: result.errors,
  timeouts: result.timeouts,
  non2xx: result.non2xx,
  statusCodes,
  cpuMs: (cpu.user + cpu.system) / 1000,
};
process.stdout.write(JSON.stringify(out));
