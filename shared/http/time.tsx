// How every page writes a time (the console's pages and the approval link pages alike).

const iso = (ms: number) => new Date(ms).toISOString();

/** A time as UTC text in a `<time>` element (machine-readable): `2026-12-02 11:20:43 UTC`. */
export const Time = ({ ms }: { ms: number | undefined }) =>
  ms === undefined ? <span class="muted">—</span> : <time datetime={iso(ms)}>{iso(ms).replace('T', ' ').slice(0, 19)} UTC</time>;
