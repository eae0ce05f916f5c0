import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../clients.ts';
import { approvalMove } from '../entities/approval.ts';
import { callbackMove } from '../entities/callback.ts';
import { executionMove } from '../entities/execution.ts';
import { type Item, type Move, moveItem } from './move.ts';
import { auditMove, deliveryMove, idempotencyMove, nudgeMove, scheduleIndexMove } from './moves.ts';

// Moving a deployed table's items to new key shapes while the service runs (`npm run admin --
// migrate`, docs/deploying.md "Upgrading"). Each change of key shape is a `Move`, kept in this folder
// (./shapes.ts: the ones reads meet too, wired to their entity's keys; ./moves.ts: the others): which
// scanned items are of the old shape, and the same item under its new key. The
// migration scans the table once, page by page at a bounded rate, and moves each old item in one
// transaction (the new item put unless it exists, the old one deleted; `moveItem`, ./move.ts), so it
// is idempotent (a second run finds nothing to move) and resumable (from the cursor it prints). After
// the deploy nothing writes an old key any more, so an old item cannot change while it is moved; a
// read that finds one first (an approval decided meanwhile) moves it the same way. An item that keeps
// its table key and changes an index key only is updated in place, conditional on the old value.

export type { Item, Move };

/** Every move, oldest first. */
export const MOVES: readonly Move[] = [
  deliveryMove,
  executionMove,
  idempotencyMove,
  approvalMove,
  callbackMove,
  nudgeMove,
  scheduleIndexMove,
  auditMove,
];

export type Progress = {
  scanned: number;
  /** Items moved, per move (a dry run: items that would be). */
  moved: Record<string, number>;
  /** Old items whose new one existed already (written since the deploy): the old one is removed. */
  superseded: number;
  /** Where to go on from (`--from`); null once the whole table was read. */
  cursor: string | null;
};

export type MigrateOptions = {
  dryRun?: boolean;
  /** Items read per second, at most (each page waits its share). */
  ratePerSecond?: number;
  /** A cursor a previous run printed. */
  from?: string;
  /** Stop after about this many items read (the cursor then says where to go on). */
  maxItems?: number;
  onPage?: (p: Progress) => void;
  moves?: readonly Move[];
};

const encode = (key: Item | undefined) => (key ? Buffer.from(JSON.stringify(key)).toString('base64url') : null);
const decode = (cursor: string): Item => {
  try {
    const key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (key && typeof key === 'object' && 'PK' in key && 'SK' in key) return key as Item;
  } catch {
    // below
  }
  throw new Error('--from: not a cursor this command printed');
};

export async function migrate(opts: MigrateOptions = {}): Promise<Progress> {
  const moves = opts.moves ?? MOVES;
  const rate = opts.ratePerSecond ?? 100;
  const progress: Progress = { scanned: 0, moved: Object.fromEntries(moves.map((m) => [m.name, 0])), superseded: 0, cursor: null };
  let start = opts.from ? decode(opts.from) : undefined;
  do {
    const began = Date.now();
    const limit = Math.max(1, Math.min(rate, opts.maxItems === undefined ? rate : opts.maxItems - progress.scanned));
    const page = await db().send(new ScanCommand({ TableName: tableName(), Limit: limit, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const item of page.Items ?? []) {
      const move = moves.find((m) => m.matches(item));
      if (!move) continue;
      const outcome = opts.dryRun ? 'moved' : await moveItem(item, move.moved(item));
      if (outcome === 'moved') progress.moved[move.name] = (progress.moved[move.name] ?? 0) + 1;
      else if (outcome === 'superseded') progress.superseded++;
    }
    progress.scanned += page.ScannedCount ?? 0;
    start = page.LastEvaluatedKey;
    progress.cursor = encode(start);
    opts.onPage?.({ ...progress, moved: { ...progress.moved } });
    const wait = ((page.ScannedCount ?? 0) / rate) * 1000 - (Date.now() - began);
    if (start && wait > 0) await new Promise((r) => setTimeout(r, wait));
  } while (start && (opts.maxItems === undefined || progress.scanned < opts.maxItems));
  return progress;
}
