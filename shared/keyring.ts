import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { config } from './config.ts';
import { withPlugins } from './sdk-plugins.ts';

/**
 * Envelope encryption of account secrets. Each value gets a fresh 256-bit data key; the value is
 * sealed with AES-256-GCM under it (node:crypto), and the data key itself is kept beside the
 * ciphertext, encrypted under the operator's master key: a KMS key on AWS (KMS Encrypt takes at most
 * 4 KiB, a data key has no such limit on the value), a key file locally. The context (account and
 * name) is bound to both layers, so a sealed value copied to another account or name does not open.
 */

/** Where the master key lives; one small interface, chosen by configuration (`keyring()`). */
export interface Keyring {
  /** Names the master key (stored with each value, so a changed configuration is noticed). */
  readonly id: string;
  /** A fresh data key, as plaintext and encrypted under the master key for this context. */
  generateDataKey(context: Record<string, string>): Promise<{ plaintext: Buffer; encrypted: Buffer }>;
  /** The plaintext of an encrypted data key; fails when the context differs from the one it was made for. */
  decryptDataKey(encrypted: Buffer, context: Record<string, string>): Promise<Buffer>;
}

/** A sealed value as stored: base64 fields. */
export type Sealed = { kid: string; edk: string; iv: string; ct: string; tag: string };

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Context as bytes for GCM's additional data: sorted keys, so the order of fields does not matter. */
const aad = (context: Record<string, string>) => Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));

function gcmSeal(key: Buffer, plaintext: Buffer, additional: Buffer) {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additional);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ct, tag: cipher.getAuthTag() };
}

function gcmOpen(key: Buffer, sealed: { iv: Buffer; ct: Buffer; tag: Buffer }, additional: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(additional);
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ct), decipher.final()]);
}

/** Seal `plaintext` under a fresh data key from `keyring`. */
export async function seal(keyring: Keyring, plaintext: string, context: Record<string, string>): Promise<Sealed> {
  const { plaintext: dataKey, encrypted } = await keyring.generateDataKey(context);
  try {
    const { iv, ct, tag } = gcmSeal(dataKey, Buffer.from(plaintext, 'utf8'), aad(context));
    const b64 = (b: Buffer) => b.toString('base64');
    return { kid: keyring.id, edk: b64(encrypted), iv: b64(iv), ct: b64(ct), tag: b64(tag) };
  } finally {
    dataKey.fill(0);
  }
}

/** Open a sealed value; throws when it was tampered with or sealed for another context. */
export async function unseal(keyring: Keyring, sealed: Sealed, context: Record<string, string>): Promise<string> {
  const dataKey = await keyring.decryptDataKey(Buffer.from(sealed.edk, 'base64'), context);
  try {
    const b = (s: string) => Buffer.from(s, 'base64');
    return gcmOpen(dataKey, { iv: b(sealed.iv), ct: b(sealed.ct), tag: b(sealed.tag) }, aad(context)).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/**
 * The local keyring: a 256-bit master key in a file (base64), created with mode 0600 on first use.
 * A data key is encrypted under it with AES-256-GCM: iv ‖ tag ‖ ciphertext.
 */
export function fileKeyring(path: string): Keyring {
  let master: Promise<Buffer> | undefined;
  const key = () => {
    master ??= loadOrCreateKeyFile(path).catch((e: unknown) => {
      master = undefined;
      throw e;
    });
    return master;
  };
  return {
    id: `file:${path}`,
    async generateDataKey(context) {
      const plaintext = randomBytes(KEY_BYTES);
      const { iv, ct, tag } = gcmSeal(await key(), plaintext, aad(context));
      return { plaintext, encrypted: Buffer.concat([iv, tag, ct]) };
    },
    async decryptDataKey(encrypted, context) {
      const iv = encrypted.subarray(0, IV_BYTES);
      const tag = encrypted.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
      const ct = encrypted.subarray(IV_BYTES + TAG_BYTES);
      return gcmOpen(await key(), { iv, ct, tag }, aad(context));
    },
  };
}

/** A 256-bit key kept base64 in `path`, created 0600 on first use (also the reviewers' links key, review-links.ts). */
export async function loadOrCreateKeyFile(path: string): Promise<Buffer> {
  const read = async () => {
    const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64');
    if (key.length !== KEY_BYTES) throw new Error(`${path} does not hold a 256-bit base64 key`);
    return key;
  };
  try {
    return await read();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  await mkdir(dirname(path), { recursive: true });
  try {
    // `wx`: two processes creating it at once both end up with the one that was written first.
    await writeFile(path, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return read();
}

/** What the KMS keyring needs of the SDK client (tests pass a stub at this boundary: there is no KMS emulator). */
export type KmsSender = Pick<KMSClient, 'send'>;

/**
 * The AWS keyring: GenerateDataKey and Decrypt with a KMS key, the context as KMS encryption context
 * (so CloudTrail shows which account's secret was opened, and a key for one context opens no other).
 * The SDK is loaded on first use: only functions that touch secrets pay for it.
 */
export function kmsKeyring(keyId: string, client?: KmsSender): Keyring {
  const sdk = () => import('@aws-sdk/client-kms');
  let kms: Promise<KmsSender> | undefined;
  const sender = () => (kms ??= client ? Promise.resolve(client) : sdk().then(({ KMSClient }) => withPlugins(new KMSClient({}))));
  return {
    id: `kms:${keyId}`,
    async generateDataKey(context) {
      const { GenerateDataKeyCommand } = await sdk();
      const out = await (await sender()).send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: context }));
      if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key');
      return { plaintext: Buffer.from(out.Plaintext), encrypted: Buffer.from(out.CiphertextBlob) };
    },
    async decryptDataKey(encrypted, context) {
      const { DecryptCommand } = await sdk();
      const out = await (await sender()).send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: encrypted, EncryptionContext: context }));
      if (!out.Plaintext) throw new Error('KMS Decrypt returned no plaintext');
      return Buffer.from(out.Plaintext);
    },
  };
}

let configured: Keyring | undefined;

/** The keyring the configuration names: SECRETS_KEY_ID (KMS, on AWS), else SECRETS_KEY_FILE (local). */
export function keyring(): Keyring {
  if (configured) return configured;
  const { SECRETS_KEY_ID, SECRETS_KEY_FILE } = config();
  if (SECRETS_KEY_ID) configured = kmsKeyring(SECRETS_KEY_ID);
  else if (SECRETS_KEY_FILE) configured = fileKeyring(SECRETS_KEY_FILE);
  else throw new Error('Account secrets need SECRETS_KEY_ID (KMS) or SECRETS_KEY_FILE (local)');
  return configured;
}

/** Forget the configured keyring (tests that change the configuration). */
export function resetKeyring(): void {
  configured = undefined;
}
