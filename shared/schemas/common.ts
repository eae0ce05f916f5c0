import * as z from 'zod';

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string(),
    detail: z.string().optional(),
    requestId: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details with a stable `code`.' });

/** Path ids: opaque, bounded, no separators. A malformed id is simply not found. */
export const Id = z.string().regex(/^[a-z]{2,3}_[0-9a-z]{26}$|^[0-9a-z]{26}$/);

export const Health = z.object({ status: z.literal('ok'), time: z.number() });
