// `mnemonist/lru-cache` as the SDK's endpoint cache uses it (DynamoDB endpoint discovery, which this
// service never turns on, builds one per client): a least-recently-used cache on a Map (see
// ../bundling.ts, ALIASES; test/unit/bundle-shims.test.ts compares the two).
module.exports = class LRUCache {
  constructor(capacity) {
    if (typeof capacity !== 'number' || capacity <= 0) throw new Error('mnemonist/lru-cache: capacity should be positive number.');
    this.capacity = capacity;
    this.items = new Map();
  }
  get size() {
    return this.items.size;
  }
  has(key) {
    return this.items.has(key);
  }
  peek(key) {
    return this.items.get(key);
  }
  get(key) {
    if (!this.items.has(key)) return undefined;
    const value = this.items.get(key);
    this.items.delete(key);
    this.items.set(key, value);
    return value;
  }
  set(key, value) {
    this.items.delete(key);
    this.items.set(key, value);
    if (this.items.size > this.capacity) this.items.delete(this.items.keys().next().value);
  }
  clear() {
    this.items.clear();
  }
};
