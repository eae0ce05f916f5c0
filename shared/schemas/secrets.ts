import * as z from 'zod';
import { SECRET_NAME, SECRET_NAME_MESSAGE } from '../engine/secret-refs.ts';
import { idOf } from './common.ts';

/** Largest secret value: 8 KiB of UTF-8. */
export const MAX_SECRET_BYTES = 8 * 1024;

export const SecretName = z.string().regex(SECRET_NAME, SECRET_NAME_MESSAGE);
export const SecretValue = z
  .string()
  .min(1)
  // A lone surrogate has no UTF-8 form: sealed, it would silently become U+FFFD.
  .refine((s) => !/\p{Cs}/u.test(s), 'must be well-formed Unicode (no lone surrogates)')
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes (UTF-8)`)
  .describe('Write-only: never returned by any route.');

export const CreateSecretBody = z.object({ name: SecretName, value: SecretValue });
export const UpdateSecretBody = z.object({ value: SecretValue });
export const SecretParams = z.object({ name: idOf('SECRET_NOT_FOUND', 'Secret', { pattern: SECRET_NAME }) });

export const SecretView = z.object({
  name: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastUsedAt: z.number().nullable().describe('Last time a run read it (at most once per 30 s per worker).'),
});
export const SecretList = z.object({ items: z.array(SecretView), nextCursor: z.null() });
