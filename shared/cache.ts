/**
 * A small bounded in-process cache with a time to live, for records read on every request that may
 * be a few seconds stale (documented where used). Oldest entries are evicted first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 1000,
  ) {}

  async get(key: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const hit = this.peek(key, now);
    if (hit) return hit.value;
    const value = await load();
    this.set(key, value, now);
    return value;
  }

  /** The entry if it is still fresh (wrapped, so a cached `undefined` is a hit too). */
  peek(key: string, now = Date.now()): { value: V } | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expires > now ? { value: hit.value } : undefined;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expires: now + this.ttlMs });
  }

  /** Forget one entry: the process that changed a record sees the change at once. */
  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
