// What the bench's scenarios do to the service in-process: the runs worker's handler on a batch of
// messages (as its event source mapping hands them over on AWS), a callback's report through its route.
import { handler as runsWorker } from '../../functions/worker/execute.ts';
import { handler as reportHandler } from '../../functions/http/v1/callbacks/report.ts';
import type { RunMessage } from '../../shared/engine/dispatch.ts';
import { apiEvent, bearer, invoke } from '../support/http.ts';

/** The runs worker's handler on `messages` as one SQS batch (message ids `<tag>-<n>`). */
export const runBatch = (messages: readonly RunMessage[], tag: string) =>
  runsWorker(
    {
      Records: messages.map((m, i) => ({
        messageId: `${tag}-${i}`,
        body: JSON.stringify(m),
        attributes: { ApproximateReceiveCount: '1' },
      })),
    } as never,
    { getRemainingTimeInMillis: () => 60_000 } as never,
  );

/** Report a callback's success through its route (`POST /api/v1/callbacks/{id}`), with the token its request carried. */
export async function report(callback: { url: string; token: string }) {
  const callbackId = new URL(callback.url).pathname.split('/').at(-1) as string;
  const res = await invoke(
    reportHandler as never,
    apiEvent({
      method: 'POST',
      path: `/api/v1/callbacks/${callbackId}`,
      params: { callbackId },
      headers: bearer(callback.token),
      body: { status: 'success', output: { ok: true } },
    }),
  );
  if (res.status !== 200) throw new Error(`callback report answered ${res.status}`);
}
