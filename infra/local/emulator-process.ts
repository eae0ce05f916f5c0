// One emulator in a process of its own: `node infra/local/emulator-process.ts <sqs|s3|ses> [dir]`.
// Started by infra/local/emulator-spawn.ts with an IPC channel: it listens on a free port of 127.0.0.1,
// sends `{ port }`, and exits when the channel closes (the stack stopped or was killed), so it never
// outlives the process that started it. Its own process lets the bench measure its CPU apart from
// our functions'; the command line names it (killStale checks /proc/<pid>/cmdline).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:http';
import { createRequestHandler } from 'local-aws-sqs';
import S3rver from 's3rver';
import { type Entry, FairState, IN_ORDER_TAG, receiptMessageId } from './fair-queue.ts';

const [kind, dir] = process.argv.slice(2);

/** What local-aws-sqs's queue objects offer (its service keeps them in `Queues`); the parts used here. */
type Queue = {
  receive(opts: {
    VisibilityTimeout?: number;
    WaitTimeSeconds?: number;
    MaxNumberOfMessages?: number;
  }): Promise<{ ReceiptHandle: string }[]>;
  setRecord(...args: unknown[]): unknown;
  getAttributes(names: string[]): Record<string, string | number>;
  changeVisibility(receiptHandle: string, seconds: number): unknown;
  delete(receiptHandle: string): unknown;
  clearRecords(): void;
  ReceiveMessageWaitTimeSeconds?: number;
  DelaySeconds?: number;
  MessageRetentionPeriod: number;
  Tags: Record<string, string>;
};

/** The request a receive serves: `gone` once its client hung up (an aborted long poll). */
type Caller = { gone: boolean; changed: () => void };
const caller = new AsyncLocalStorage<Caller>();
const waiters = new WeakMap<Queue, Set<() => void>>();
const notify = (q: Queue) => {
  for (const w of waiters.get(q) ?? []) w();
};
/**
 * Messages a receive can take now: local-aws-sqs counts messages in flight in
 * ApproximateNumberOfMessages (AWS does not) and delayed ones in neither. `pending`: some are in
 * flight or delayed and may become visible on a timer this wrapper cannot see.
 */
const state = (q: Queue) => {
  const a = q.getAttributes(['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed']);
  const count = (name: string) => Number(a[name]) || 0;
  const notVisible = count('ApproximateNumberOfMessagesNotVisible');
  return {
    ready: Math.max(0, count('ApproximateNumberOfMessages') - notVisible),
    pending: notVisible + count('ApproximateNumberOfMessagesDelayed') > 0,
  };
};
/** How often a waiting long poll looks for messages coming back from flight or a delay. */
const PENDING_CHECK_MS = 50;

/**
 * SQS long polling as AWS answers it: as soon as a message is ready, with up to MaxNumberOfMessages
 * of those ready, and nothing taken for a client that hung up. local-aws-sqs alone answers a long
 * poll only once it holds MaxNumberOfMessages or its wait is over, checking every 10 ms for each
 * waiting receive; here a waiting receive sleeps until a message is sent (or, while some are in
 * flight or delayed, every 50 ms), then asks local-aws-sqs for exactly the ready ones without
 * waiting. A short poll (WaitTimeSeconds 0) is local-aws-sqs's own.
 */
function awsLongPolling(q: Queue) {
  const receive = q.receive.bind(q);
  const setRecord = q.setRecord.bind(q);
  waiters.set(q, new Set());
  q.setRecord = (...args: unknown[]) => {
    const out = setRecord(...args);
    // local-aws-sqs makes a new message visible on a timer of its delay, 0 ms included: wake the
    // waiting receives on a timer of the same length, which runs after it (timers of one length run
    // in the order they were set), not at once, when the message is not visible yet.
    const seconds = Number((args[0] as { DelaySeconds?: unknown } | undefined)?.DelaySeconds);
    setTimeout(() => notify(q), (Number.isNaN(seconds) ? (q.DelaySeconds ?? 0) : seconds) * 1000).unref();
    return out;
  };
  q.receive = async (opts) => {
    const wait = Number(opts.WaitTimeSeconds ?? q.ReceiveMessageWaitTimeSeconds ?? 0);
    if (!(wait > 0)) return receive(opts);
    const max = Number(opts.MaxNumberOfMessages ?? 1);
    const deadline = Date.now() + wait * 1000;
    const from = caller.getStore();
    for (;;) {
      if (from?.gone) return [];
      // local-aws-sqs makes each new message visible on a 0 ms timer of its own: let those already set
      // run first, so a batch just sent is taken whole, not its first message alone.
      await new Promise((r) => setTimeout(r, 0));
      const { ready, pending } = state(q);
      if (ready > 0) {
        const got = await receive({ ...opts, WaitTimeSeconds: 0, MaxNumberOfMessages: Math.min(ready, max) });
        if (from?.gone) {
          // Its client hung up while local-aws-sqs took them: back to the queue at once.
          for (const m of got) q.changeVisibility(m.ReceiptHandle, 0);
          notify(q);
          return [];
        }
        if (got.length > 0) return got;
      }
      const left = deadline - Date.now();
      if (left <= 0) return [];
      await new Promise<void>((resolve) => {
        const set = waiters.get(q) as Set<() => void>;
        const done = () => {
          clearTimeout(timer);
          set.delete(done);
          if (from) from.changed = () => undefined;
          resolve();
        };
        const timer = setTimeout(done, pending ? Math.min(left, PENDING_CHECK_MS) : left);
        set.add(done);
        if (from) from.changed = done;
      });
    }
  };
}

/** Which queue's fairness state holds each message (a message moved to a dead-letter queue leaves its source's). */
const holder = new Map<string, FairState>();

/**
 * SQS fair queues (./fair-queue.ts): every receive, short or long (whose takes come through here too),
 * gets the ready messages the fairness rules pick. While no tenant is noisy that is local-aws-sqs's own
 * choice, the oldest ready messages, untouched. Otherwise the ready messages not picked are marked
 * delayed while local-aws-sqs takes the picked ones (one such receive at a time per queue; local-aws-sqs
 * takes them within its 10 ms tick), then marked ready again and the waiting long polls woken.
 */
function fairQueue(q: Queue) {
  const fair = new FairState(() => q.MessageRetentionPeriod);
  const receive = q.receive.bind(q);
  const setRecord = q.setRecord.bind(q);
  const remove = q.delete.bind(q);
  const clear = q.clearRecords.bind(q);
  q.setRecord = (...args: unknown[]) => {
    const out = setRecord(...args);
    // local-aws-sqs moves a message to the dead-letter queue, or back, under its own id: it left its first queue.
    if (typeof args[1] === 'string') holder.get(args[1])?.removed(args[1]);
    // A standard queue's new message: the entry local-aws-sqs keeps (a FIFO queue's duplicate answers a copy).
    if (out && typeof out === 'object' && 'visible' in out && 'record' in out) {
      const entry = out as Entry;
      fair.added(entry);
      holder.set(entry.record.MessageId, fair);
    }
    return out;
  };
  q.delete = (receiptHandle: string) => {
    const out = remove(receiptHandle);
    const id = receiptMessageId(receiptHandle);
    if (id && holder.get(id) === fair) {
      fair.removed(id);
      holder.delete(id);
    }
    return out;
  };
  q.clearRecords = () => {
    clear();
    fair.cleared();
  };
  q.receive = (opts) => {
    if (q.Tags[IN_ORDER_TAG] === 'true' || !fair.picks(Number(opts.MaxNumberOfMessages ?? 1))) return receive(opts);
    const take = async () => {
      const picks = fair.picks(Number(opts.MaxNumberOfMessages ?? 1));
      if (!picks) return receive(opts);
      const release = fair.holdOthers(picks);
      try {
        return await receive({ ...opts, WaitTimeSeconds: 0, MaxNumberOfMessages: picks.length });
      } finally {
        release();
        notify(q);
      }
    };
    const turn = fair.lock.then(take, take);
    fair.lock = turn.catch(() => undefined);
    return turn;
  };
}

async function sqs() {
  const { service, requestHandler } = createRequestHandler({
    port: 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  } as never) as unknown as {
    service: { Queues: Queue[]; PORT: number };
    requestHandler: (req: unknown, res: unknown) => void;
  };
  const patched = new WeakSet<Queue>();
  const server = createServer((req, res) => {
    for (const q of service.Queues) {
      if (!patched.has(q)) {
        patched.add(q);
        // Fairness first: the long poll's takes go through it.
        fairQueue(q);
        awsLongPolling(q);
      }
    }
    const from: Caller = { gone: false, changed: () => undefined };
    res.on('close', () => {
      if (!res.writableFinished) {
        from.gone = true;
        from.changed();
      }
    });
    caller.run(from, () => requestHandler(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  // The queue URLs local-aws-sqs hands out carry its port.
  service.PORT = port;
  return port;
}

async function s3() {
  if (!dir) throw new Error('usage: emulator-process.ts s3 <dir>');
  const { port } = (await new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true }).run()) as { port: number };
  return port;
}

/** aws-ses-v2-local: SES v2 SendEmail, a web viewer of the mail it took at `/`, and the mail as JSON at `/store`. */
async function ses() {
  const mod = (await import('aws-ses-v2-local')) as unknown as { default: { default?: SesServer } | SesServer };
  const start = (typeof mod.default === 'function' ? mod.default : mod.default.default) as SesServer;
  const server = await start({ host: '127.0.0.1', port: 0 });
  return (server.address() as { port: number }).port;
}
type SesServer = (config: { host: string; port: number }) => Promise<import('node:http').Server>;

const port = kind === 'sqs' ? await sqs() : kind === 's3' ? await s3() : kind === 'ses' ? await ses() : undefined;
if (port === undefined) throw new Error('usage: emulator-process.ts <sqs|s3|ses> [dir]');
process.on('disconnect', () => process.exit(0));
process.send?.({ port });
