// SQS fair queues in the local SQS emulator (infra/local/emulator-process.ts). On AWS a standard
// queue whose messages carry a MessageGroupId is a fair queue: each group is a tenant, and while one
// tenant holds a disproportionate share of the messages in flight (a noisy neighbour), a receive
// gets the other tenants' ready messages first. local-aws-sqs keeps the group of a standard queue's
// message but hands out the oldest ready messages whatever their group; this module chooses which
// ready messages a receive takes, by the rules AWS documents, and the emulator still does the taking
// (receive counts, receipt handles, visibility timers, maxReceiveCount and the dead-letter queue).

/** What these rules read of local-aws-sqs's message entries (its queues keep one object per message and change it in place). */
export type Entry = {
  visible: boolean;
  delayed: boolean;
  record: { MessageId: string; attributes: { MessageGroupId?: string; SentTimestamp?: string } };
};

/**
 * AWS's thresholds: a tenant is noisy once it has at least 30 messages in flight and more than 10 %
 * of the queue's; it is quiet again once its backlog is drained or it has sent nothing for 5 minutes.
 * (AWS also counts a tenant's share of the consumers' processing time; this emulation does not.)
 */
export const FAIR = { minInFlight: 30, minShare: 0.1, quietAfterMs: 5 * 60_000 };

/**
 * A queue tagged so (`true`) hands out the oldest ready messages whatever their group, as a standard
 * queue did before fair queues: the fairness bench's comparison (test/bench/fairness.ts), nothing AWS has.
 */
export const IN_ORDER_TAG = 'local:in-order';

/** One queue's messages as the fairness rules see them. */
export class FairState {
  /** Every message the queue holds, in the order it was sent (the emulator's own order). */
  private readonly entries = new Map<string, Entry>();
  /** When each group last sent a message. */
  private readonly lastSend = new Map<string, number>();
  /** The groups now treated as noisy neighbours. */
  readonly noisy = new Set<string>();
  /** Receives that steer the emulator one at a time (./emulator-process.ts). */
  lock: Promise<unknown> = Promise.resolve();

  /** Seconds the queue keeps a message (it can change). */
  private readonly retentionSeconds: () => number;

  constructor(retentionSeconds: () => number) {
    this.retentionSeconds = retentionSeconds;
  }

  added(entry: Entry, now = Date.now()) {
    this.entries.set(entry.record.MessageId, entry);
    const group = entry.record.attributes.MessageGroupId;
    if (group) this.lastSend.set(group, now);
  }
  removed(messageId: string) {
    return this.entries.delete(messageId);
  }
  cleared() {
    this.entries.clear();
  }

  /** Marks every ready message but `picks` delayed, so that local-aws-sqs takes those alone; returns the undo. */
  holdOthers(picks: readonly Entry[]): () => void {
    const chosen = new Set(picks);
    const held: Entry[] = [];
    for (const e of this.entries.values())
      if (e.visible && !e.delayed && !chosen.has(e)) {
        e.delayed = true;
        held.push(e);
      }
    return () => {
      for (const e of held) e.delayed = false;
    };
  }

  /**
   * The ready messages a receive of up to `max` takes, or undefined when that is simply the oldest
   * ready ones (no noisy neighbour): quiet tenants' messages first (a message without a group is a
   * tenant of its own), oldest first; then the noisy tenants', the one with the fewest in flight first.
   */
  picks(max: number, now = Date.now()): Entry[] | undefined {
    const ready: Entry[] = [];
    const inFlight = new Map<string, number>();
    const waiting = new Set<string>();
    let total = 0;
    const kept = this.retentionSeconds() * 1000;
    for (const [id, e] of this.entries) {
      // Past its retention period local-aws-sqs has dropped it.
      if (now - Number(e.record.attributes.SentTimestamp ?? now) > kept) {
        this.entries.delete(id);
        continue;
      }
      const group = e.record.attributes.MessageGroupId;
      if (!e.visible) {
        total++;
        if (group) inFlight.set(group, (inFlight.get(group) ?? 0) + 1);
        continue;
      }
      if (group) waiting.add(group);
      if (!e.delayed) ready.push(e);
    }
    for (const group of this.noisy)
      if (!waiting.has(group) || now - (this.lastSend.get(group) ?? 0) >= FAIR.quietAfterMs) this.noisy.delete(group);
    for (const [group, n] of inFlight) if (n >= FAIR.minInFlight && n > FAIR.minShare * total) this.noisy.add(group);
    if (this.noisy.size === 0 || ready.length === 0) return undefined;
    const rank = (e: Entry) => {
      const group = e.record.attributes.MessageGroupId;
      return group && this.noisy.has(group) ? 1 + (inFlight.get(group) ?? 0) : 0;
    };
    return ready
      .map((e, i) => ({ e, i, r: rank(e) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .slice(0, max)
      .map((x) => x.e);
  }
}

/** The message id a receipt handle of local-aws-sqs names (base64 of a UUID and `{"date","MessageId","QueueName"}`). */
export function receiptMessageId(receiptHandle: string): string | undefined {
  try {
    const text = Buffer.from(receiptHandle, 'base64').toString('utf8');
    const id = (JSON.parse(text.slice(text.indexOf('{'))) as { MessageId?: unknown }).MessageId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
