import { join } from 'node:path';
import { AUDIT_EVENTS_MAPPING, AUDIT_EVENTS_TIMEOUT_SECONDS } from '../../functions/audit-stream.ts';
import { config } from '../../shared/config.ts';
import { type PutEntry, startEventBridgeListener } from './eventbridge.ts';
import { workerFunction } from './lambda.ts';
import { startStreamPoller } from './stream-poller.ts';

/** EventBridge entries `npm start`'s local bus keeps for `GET /` (the newest). */
const KEPT_REQUESTS = 1_000;

const describe = (e: PutEntry) => {
  let action = '';
  try {
    action = String(JSON.parse(e.Detail ?? '{}').action ?? '');
  } catch {}
  return `${e.Source} "${e.DetailType}"${action ? ` ${action}` : ''}`;
};

/**
 * The audit-events worker on the table's stream, as AWS runs it (functions/audit-stream.ts): the
 * stream poller (infra/local/stream-poller.ts) hands it new audit entries, and what fails its
 * retries is described on the local `audit-events-dlq` queue (`AUDIT_EVENTS_DLQ_URL`). Its PutEvents
 * go where `AWS_ENDPOINT_URL_EVENTBRIDGE` points; unset, to a local default bus started here, which
 * logs a line for each entry and lists them at its address (`GET /`). Each shard's checkpoint is kept
 * in `DATA_DIR/audit-stream.json`, so a restart goes on where the last run stopped.
 */
export async function startAuditStream(opts: { dataDir?: string }) {
  const bus = process.env.AWS_ENDPOINT_URL_EVENTBRIDGE
    ? undefined
    : await startEventBridgeListener({
        keep: KEPT_REQUESTS,
        onPut: (e) => console.log(`${new Date().toISOString()} EventBridge (local default bus): put ${describe(e)}`),
      });
  if (bus) process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.url;
  try {
    const { handler } = await import('../../functions/worker/audit-events.ts');
    const poller = await startStreamPoller({
      tableName: config().TABLE_NAME,
      mapping: AUDIT_EVENTS_MAPPING,
      fn: workerFunction('worker/audit-events', AUDIT_EVENTS_TIMEOUT_SECONDS),
      handler,
      onFailureQueueUrl: process.env.AUDIT_EVENTS_DLQ_URL,
      ...(opts.dataDir && { checkpointFile: join(opts.dataDir, 'audit-stream.json') }),
    });
    return {
      /** The local default bus's address (absent: `AWS_ENDPOINT_URL_EVENTBRIDGE` named another). */
      eventBus: bus?.url,
      stop: async () => {
        await poller.stop();
        await bus?.close();
        if (bus && process.env.AWS_ENDPOINT_URL_EVENTBRIDGE === bus.url) delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
      },
    };
  } catch (e) {
    await bus?.close();
    if (bus) delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    throw e;
  }
}
