import * as z from 'zod';
import { decodeCursor, encodeCursor } from '../db/cursor.ts';
import { badRequest } from '../errors.ts';

// The runs list's cursor, both ways. A merged newest-first window of the run listings ends at one sort
// key: every run above it was read, none below it (shared/db/shards.ts: each shard gives its newest
// keys, the merge keeps the newest of all), so a page's start is that one key (`a`). The cursor also
// carries where the pages before began (`b`, newest last; null: the first page) and how many runs
// they showed, so "Previous page" is a link of its own and the page can say which runs it shows
// ("Runs 26–50"). Signed and bound to the account and filters like every cursor (shared/db/cursor.ts).

/** Pages back a cursor remembers: "Previous page" goes back this far, then "Newest runs" (about 50 bytes each). */
export const BACK_PAGES = 30;

const Key = z.string().min(1).max(200);
const At = z.object({
  /** The page starts below this sort key. */
  a: Key,
  /** The rows shown before this page. */
  o: z.number().int().min(0),
  /** The pages before: their start (null: the first page) and their rows shown before them. */
  b: z.array(z.object({ a: Key.nullable(), o: z.number().int().min(0) })).max(BACK_PAGES),
});
export type ListAt = z.infer<typeof At>;

const invalid = () => badRequest('INVALID_CURSOR', 'The cursor is invalid, tampered with, or from another query.');

export function readListCursor(cursor: string | undefined, binding: string): ListAt | undefined {
  const k = decodeCursor(cursor, binding);
  if (k === undefined) return undefined;
  const at = At.safeParse(k);
  if (!at.success) throw invalid();
  return at.data;
}

/** The position `runWindow` starts at: every shard below the key. */
export const positionOf = (at: ListAt | undefined) => (at ? { p: [], d: [], l: at.a } : undefined);

/** The cursor of the page after this one (`shown` rows on it), which starts below `after`. */
export function nextCursor(at: ListAt | undefined, shown: number, after: string, binding: string): string | null {
  const here = { a: at?.a ?? null, o: at?.o ?? 0 };
  const next: ListAt = { a: after, o: here.o + shown, b: [...(at?.b ?? []), here].slice(-BACK_PAGES) };
  return encodeCursor(next, binding);
}

/**
 * Where "Previous page" goes: `first` (the list without a cursor), a cursor, or `newest` when the
 * page before is further back than the cursor remembers (the link is then "Newest runs"); undefined on
 * the first page.
 */
export function previousOf(at: ListAt | undefined, binding: string): { first: true } | { cursor: string } | { newest: true } | undefined {
  if (!at) return undefined;
  const before = at.b.at(-1);
  if (!before) return { newest: true };
  const { a, o } = before;
  if (a === null) return { first: true };
  return { cursor: encodeCursor({ a, o, b: at.b.slice(0, -1) }, binding) as string };
}
