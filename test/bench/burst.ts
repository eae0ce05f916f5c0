// `npm run bench -- burst`: a webhook's inbound log under a flood of refusals (docs/performance.md "A burst of
// refusals"). On the local stack in the bench process: one account's accepted triggers, one at a time, while
// nothing else happens (quiet), while 1,000 refused requests to the same webhook arrive 20 at a time (a bad
// signature: each refusal goes to the log), and while 1,000 requests to an unknown webhook arrive the same way
// (404 before any webhook is found: nothing logged; the control, the same load without the log). The check: an
// accepted trigger's p50 and p99 during the logged burst ≤ 1.2× during the control burst, which measures what
// the log adds, not what two shared cores add by answering 1,000 requests beside it. The ratio to the quiet
// triggers is printed beside it; on AWS the refusals are other instances' and share no CPU with the trigger.
import { startLocalStack } from '../../infra/local/stack.ts';
import { INBOUND_LOG_SIZE, readInboundHead } from '../../shared/db/entities/inbound-request.ts';
import { flushRefusals } from '../../shared/domain/inbound-record.ts';
import { newId } from '../../shared/ids.ts';
import { useOwnQueues } from '../support/engine.ts';
import { percentile, type Tenant, tenant } from './fairness.ts';
import { setFlow } from './flows.ts';

export const BURST = { refusals: 1_000, connections: 20, quiet: 200, rounds: 5, gate: 1.2 };

/** Accepted triggers of `t`, one at a time, `n` of them or (`n` undefined) until `until()`: each one's ms, sorted. */
async function accepted(base: string, t: Tenant, n: number | undefined, until = () => false) {
  const ms: number[] = [];
  while (n === undefined ? !until() : ms.length < n) {
    const sent = performance.now();
    const res = await fetch(`${base}${t.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: '{"n":1}',
    });
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 202) throw new Error(`an accepted trigger answered ${res.status}`);
    ms.push(performance.now() - sent);
  }
  return ms.sort((a, b) => a - b);
}

/** `n` requests to `path` that are refused, `connections` at a time: the count of each status. */
async function refusals(base: string, path: string, n: number, connections: number) {
  const statuses: Record<number, number> = {};
  let sent = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (sent < n) {
        sent++;
        const res = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-webhook-signature': 'sha256=00' },
          body: JSON.stringify({ n: sent }),
        });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  return statuses;
}

const row = (scenario: string, ms: number[], statuses?: Record<number, number>) => ({
  scenario,
  triggers: ms.length,
  p50ms: Math.round(percentile(ms, 50) * 10) / 10,
  p99ms: Math.round(percentile(ms, 99) * 10) / 10,
  refusals: statuses
    ? Object.entries(statuses)
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ')
    : '',
});

export async function burstPart() {
  await useOwnQueues();
  const stack = await startLocalStack({ host: '127.0.0.1', port: 0, emulators: 'reuse' });
  try {
    // The accepted triggers' webhook takes a key; the refused ones go to a webhook of the same account that
    // takes a signature (the bad one refuses each), or to an id no webhook has.
    const t = await tenant(setFlow(1));
    const signed = await tenant(setFlow(1), { secretKey: 'burst-bench-signing-secret' });
    const unknown = `/api/webhooks/${newId('wh')}/trigger`;
    // A warm-up of both paths (caches, DynamoDB Local's JIT).
    await accepted(stack.url, t, 50);
    await refusals(stack.url, signed.path, 100, BURST.connections);
    await refusals(stack.url, unknown, 100, BURST.connections);
    await flushRefusals();
    const before = await readInboundHead(signed.webhookId);

    const quiet = await accepted(stack.url, t, BURST.quiet);
    const during = async (path: string) => {
      let done = false;
      const flood = refusals(stack.url, path, BURST.refusals, BURST.connections).finally(() => {
        done = true;
      });
      const ms = await accepted(stack.url, t, undefined, () => done);
      return { ms, statuses: await flood };
    };
    // Rounds of both, in turn, so that neither has the machine's better minutes; a burst lasts about a second.
    const control = { ms: [] as number[], statuses: {} as Record<number, number> };
    const logged = { ms: [] as number[], statuses: {} as Record<number, number> };
    const add = (to: typeof control, from: typeof control) => {
      to.ms.push(...from.ms);
      for (const [s, n] of Object.entries(from.statuses)) to.statuses[Number(s)] = (to.statuses[Number(s)] ?? 0) + n;
    };
    for (let round = 0; round < BURST.rounds; round++) {
      add(control, await during(unknown));
      add(logged, await during(signed.path));
    }
    control.ms.sort((a, b) => a - b);
    logged.ms.sort((a, b) => a - b);
    // What this process's instance still holds is written now (as the log's page does before it reads).
    await flushRefusals();
    const after = await readInboundHead(signed.webhookId);

    const ratio = (p: number) => Math.round((percentile(logged.ms, p) / percentile(control.ms, p)) * 100) / 100;
    const overQuiet = (p: number) => Math.round((percentile(logged.ms, p) / percentile(quiet, p)) * 100) / 100;
    const rows = [
      row('quiet', quiet),
      row(`beside ${BURST.rounds} × ${BURST.refusals} requests to an unknown webhook (nothing logged)`, control.ms, control.statuses),
      row(`beside ${BURST.rounds} × ${BURST.refusals} refused requests to a webhook (logged)`, logged.ms, logged.statuses),
    ];
    const fives = Object.entries({ ...control.statuses, ...logged.statuses }).filter(([s]) => Number(s) >= 500);
    const log = {
      written: after.seq - before.seq,
      kept: Math.min(after.seq, INBOUND_LOG_SIZE),
      counted: Object.values(after.refused).reduce((x, y) => x + y, 0) - Object.values(before.refused).reduce((x, y) => x + y, 0),
    };
    const held = ratio(50) <= BURST.gate && ratio(99) <= BURST.gate && fives.length === 0 && log.counted === BURST.rounds * BURST.refusals;
    console.log(
      `\nA burst of refusals: an accepted trigger's answer (ms), one at a time, quiet and beside bursts of ${BURST.refusals} requests ${BURST.connections} at a time (${BURST.rounds} rounds of each, in turn)`,
    );
    console.table(rows);
    console.log(
      `the inbound log: ${log.written} refusals written (10 at most a flush, a flush a second), ${log.kept} kept (the ring of ${INBOUND_LOG_SIZE}), ${log.counted} counted by code`,
    );
    console.log(
      `logged burst / control burst: p50 ${ratio(50)}, p99 ${ratio(99)} (gate ≤ ${BURST.gate}); logged burst / quiet: p50 ${overQuiet(50)}, p99 ${overQuiet(99)}; 5xx: ${fives.length ? JSON.stringify(fives) : 'none'}: ${held ? 'holds' : 'FAILS'}`,
    );
    return { rows, log, ratio: { p50: ratio(50), p99: ratio(99) }, overQuiet: { p50: overQuiet(50), p99: overQuiet(99) }, held };
  } finally {
    await stack.stop();
  }
}
