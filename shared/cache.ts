/**
 * A small bounded in-process cache with a time to live, for records read on every request that may
 * be a few seconds stale (documented where used). Oldest entries are evicted first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 1000,
  ) {}

  async get(key: string, load: () => Promise<V>, now = Date.now()): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = await load();
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expires: now + this.ttlMs });
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
