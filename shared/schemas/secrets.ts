import * as z from 'zod';
import { HOST_PATTERN, MAX_ALLOWED_HOSTS, SECRET_NAME, SECRET_NAME_MESSAGE } from '../engine/secret-refs.ts';
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

/** A host name (`api.stripe.com`) or a pattern for its subdomains (`*.example.com`), any case; at most 253 characters. */
export const HostPattern = z
  .string()
  .max(253)
  .transform((h) => h.trim().toLowerCase().replace(/\.$/, ''))
  .pipe(z.string().regex(HOST_PATTERN, 'must be a host name (api.example.com) or *. and one (*.example.com)'));
export const AllowedHosts = z
  .array(HostPattern)
  .min(1)
  .max(MAX_ALLOWED_HOSTS)
  .describe(
    'The only hosts a step may send the secret to (`*.example.com`: any subdomain of example.com, not itself). A definition with a literal URL to another host is 400 `SECRET_NOT_ALLOWED` at save; at run time the step fails `SECRET_NOT_ALLOWED` before resolving or sending, also on a redirect to another host. Absent or null: no binding.',
  );
export const MembersUse = z
  .enum(['use', 'none'])
  .describe(
    'Whether members (not only admins) may save definitions that reference the secret (403 `SECRET_NOT_ALLOWED` otherwise). Default for new secrets: none; secrets created before the field existed act as use.',
  );

export const CreateSecretBody = z.object({
  name: SecretName,
  value: SecretValue,
  allowedHosts: AllowedHosts.optional(),
  members: MembersUse.default('none'),
});
export const UpdateSecretBody = z
  .object({ value: SecretValue.optional(), allowedHosts: AllowedHosts.nullable().optional(), members: MembersUse.optional() })
  .refine(
    (b) => b.value !== undefined || b.allowedHosts !== undefined || b.members !== undefined,
    'Send value, allowedHosts, members or several.',
  );
export const SecretParams = z.object({ name: idOf('SECRET_NOT_FOUND', 'Secret', { pattern: SECRET_NAME }) });

export const SecretView = z.object({
  name: z.string(),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastUsedAt: z.number().nullable().describe('Last time a run read it (at most once per 30 s per worker).'),
  allowedHosts: z.array(z.string()).nullable(),
  members: z.enum(['use', 'none']),
});
export const SecretList = z.object({ items: z.array(SecretView), nextCursor: z.null() });
