import { randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

/**
 * ulid's own generator asks the OS for one random byte per character (16 calls of
 * `crypto.getRandomValues` per id, and it looks up the crypto object each time); this one draws the
 * same bytes from a pool of 4 KiB refilled with `randomFillSync`. One byte per character, as ulid
 * does: byte / 256 × 32 takes the top five bits, so every character is uniform. The event and audit
 * ids (`monotonicFactory`) draw from it too.
 */
const pool = new Uint8Array(4096);
let next = pool.length;
export const pooledRandom = () => {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return (pool[next++] as number) / 256;
};

/** Ids are a type prefix and a lower-case ULID: sortable by creation, no `_` or `/` after the prefix. */
export const newId = (prefix: 'acc' | 'usr' | 'wf' | 'wh' | 'ex' | 'ap' | 'ar' | 'ch' | 'dl' | 'cb' | 'sch') =>
  `${prefix}_${ulid(undefined, pooledRandom).toLowerCase()}`;

/** A user id: `usr_` and a lower-case ULID (Crockford base32). */
export const USER_ID = /^usr_[0-9a-hjkmnp-tv-z]{26}$/;

/** Key and session ids sit inside a token (`dyk_<id>_...`), so they carry no prefix of their own. */
export const newTokenId = () => ulid(undefined, pooledRandom).toLowerCase();
