import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resetConfig } from '../../shared/config.ts';
import { fileKeyring, keyring, kmsKeyring, type KmsSender, resetKeyring, seal, unseal } from '../../shared/keyring.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'flowgate-keyring-'));
const ctx = { accountId: 'acc_1', secret: 'API_TOKEN' };
const VALUE = 'tok-ÄÖ-€-🔑-'.repeat(300); // multi-byte, longer than KMS Encrypt's 4 KiB

describe('the local keyring (a key file)', () => {
  it('creates its key file on first use with mode 0600, and seals values that only open with that file and context', async () => {
    const path = join(dir(), 'nested', 'secrets.key');
    const ring = fileKeyring(path);
    const sealed = await seal(ring, VALUE, ctx);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(JSON.stringify(sealed)).not.toContain('tok-');
    expect(Buffer.from(sealed.ct, 'base64').toString('utf8')).not.toContain('tok-');
    expect(sealed.kid).toBe(`file:${path}`);

    // Another process with the same file opens it; a fresh data key per value.
    expect(await unseal(fileKeyring(path), sealed, ctx)).toBe(VALUE);
    const again = await seal(ring, VALUE, ctx);
    expect(again.edk).not.toBe(sealed.edk);
    expect(again.ct).not.toBe(sealed.ct);

    await expect(unseal(ring, sealed, { ...ctx, accountId: 'acc_2' })).rejects.toThrow();
    await expect(unseal(ring, sealed, { ...ctx, secret: 'OTHER' })).rejects.toThrow();
    await expect(unseal(fileKeyring(join(dir(), 'secrets.key')), sealed, ctx)).rejects.toThrow();
    const flipped = Buffer.from(sealed.ct, 'base64');
    flipped[0] = (flipped[0] as number) ^ 1;
    await expect(unseal(ring, { ...sealed, ct: flipped.toString('base64') }, ctx)).rejects.toThrow();
  });

  it('uses an existing key file as it is, and refuses one that holds no 256-bit key', async () => {
    const d = dir();
    const key = randomBytes(32);
    writeFileSync(join(d, 'good.key'), key.toString('base64'), { mode: 0o600 });
    const sealed = await seal(fileKeyring(join(d, 'good.key')), 'v', ctx);
    // The data key is AES-256-GCM under the file's key: iv ‖ tag ‖ ciphertext.
    const edk = Buffer.from(sealed.edk, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, edk.subarray(0, 12));
    decipher.setAAD(Buffer.from(JSON.stringify(Object.entries(ctx).sort())));
    decipher.setAuthTag(edk.subarray(12, 28));
    expect(Buffer.concat([decipher.update(edk.subarray(28)), decipher.final()])).toHaveLength(32);

    writeFileSync(join(d, 'short.key'), randomBytes(16).toString('base64'));
    await expect(seal(fileKeyring(join(d, 'short.key')), 'v', ctx)).rejects.toThrow(/256-bit/);
  });
});

/**
 * A stand-in for KMS at the SDK-client boundary (there is no KMS emulator): GenerateDataKey and
 * Decrypt with a key of its own, honouring the encryption context as KMS does.
 */
function stubKms() {
  const master = randomBytes(32);
  const calls: { name: string; input: Record<string, unknown> }[] = [];
  const ctxBytes = (c: unknown) => Buffer.from(JSON.stringify(Object.entries((c ?? {}) as object).sort()));
  const client: KmsSender = {
    send: (async (command: unknown) => {
      if (command instanceof GenerateDataKeyCommand) {
        calls.push({ name: 'GenerateDataKey', input: { ...command.input } });
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const c = createCipheriv('aes-256-gcm', master, iv);
        c.setAAD(ctxBytes(command.input.EncryptionContext));
        const ct = Buffer.concat([c.update(plaintext), c.final()]);
        return {
          KeyId: command.input.KeyId,
          Plaintext: new Uint8Array(plaintext),
          CiphertextBlob: new Uint8Array(Buffer.concat([iv, c.getAuthTag(), ct])),
        };
      }
      if (command instanceof DecryptCommand) {
        calls.push({ name: 'Decrypt', input: { ...command.input } });
        const blob = Buffer.from(command.input.CiphertextBlob as Uint8Array);
        const d = createDecipheriv('aes-256-gcm', master, blob.subarray(0, 12));
        d.setAAD(ctxBytes(command.input.EncryptionContext));
        d.setAuthTag(blob.subarray(12, 28));
        try {
          return { Plaintext: new Uint8Array(Buffer.concat([d.update(blob.subarray(28)), d.final()])) };
        } catch {
          throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
        }
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    }) as KmsSender['send'],
  };
  return { client, calls };
}

describe('the KMS keyring', () => {
  const KEY = 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('asks KMS for an AES-256 data key with the context, seals locally, and opens with Decrypt and the same context', async () => {
    const { client, calls } = stubKms();
    const ring = kmsKeyring(KEY, client);
    const sealed = await seal(ring, VALUE, ctx);
    expect(sealed.kid).toBe(`kms:${KEY}`);
    expect(calls).toEqual([{ name: 'GenerateDataKey', input: { KeyId: KEY, KeySpec: 'AES_256', EncryptionContext: ctx } }]);
    expect(JSON.stringify(sealed)).not.toContain('tok-');

    expect(await unseal(ring, sealed, ctx)).toBe(VALUE);
    expect(calls[1]).toMatchObject({ name: 'Decrypt', input: { KeyId: KEY, EncryptionContext: ctx } });
    expect(Buffer.from(calls[1]?.input.CiphertextBlob as Uint8Array).toString('base64')).toBe(sealed.edk);
    // The value itself never goes to KMS (its Encrypt takes at most 4 KiB): only 32-byte data keys do.
    expect(JSON.stringify(calls)).not.toContain('tok-');

    await expect(unseal(ring, sealed, { ...ctx, accountId: 'acc_other' })).rejects.toThrow(/InvalidCiphertext/);
  });

  it('fails loudly when KMS answers without a key', async () => {
    const ring = kmsKeyring(KEY, { send: (async () => ({})) as KmsSender['send'] });
    await expect(seal(ring, 'v', ctx)).rejects.toThrow(/no key/);
  });
});

describe('keyring()', () => {
  it('is KMS with SECRETS_KEY_ID, else the key file of SECRETS_KEY_FILE, else refuses', () => {
    const saved = { id: process.env.SECRETS_KEY_ID, file: process.env.SECRETS_KEY_FILE };
    const set = (id?: string, file?: string) => {
      for (const [k, v] of [
        ['SECRETS_KEY_ID', id],
        ['SECRETS_KEY_FILE', file],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      resetConfig();
      resetKeyring();
    };
    try {
      set('alias/flowgate', '/tmp/x/secrets.key');
      expect(keyring().id).toBe('kms:alias/flowgate');
      set(undefined, '/tmp/x/secrets.key');
      expect(keyring().id).toBe('file:/tmp/x/secrets.key');
      set(undefined, undefined);
      expect(() => keyring()).toThrow(/SECRETS_KEY_ID/);
    } finally {
      set(saved.id, saved.file);
    }
  });
});
