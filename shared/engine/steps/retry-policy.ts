import * as z from 'zod';

/**
 * A step's `retry` policy (on `http_request` and `artifact`), beside the step schemas: the definition
 * schema reads it without the retry runtime (`../step-retry.ts`), which plans and schedules the attempts.
 */
export const RETRY_ON = ['HTTP_5XX', 'HTTP_429', 'HTTP_4XX', 'TIMEOUT', 'NETWORK', 'RESPONSE_TOO_LARGE'] as const;
export type RetryOn = (typeof RETRY_ON)[number];
export const DEFAULT_RETRY_ON: RetryOn[] = ['HTTP_5XX', 'HTTP_429', 'TIMEOUT', 'NETWORK'];
/** The longest wait a Retry-After may ask for when the policy sets no `maxDelaySeconds`. */
export const MAX_RETRY_DELAY_SECONDS = 86_400;

export const RetryPolicy = z
  .strictObject({
    maxAttempts: z.number().int().min(1).max(10),
    intervalSeconds: z.number().int().min(1).max(3600).default(1),
    backoffRate: z.number().min(1).max(10).default(2),
    maxDelaySeconds: z.number().int().min(1).max(MAX_RETRY_DELAY_SECONDS).optional(),
    jitter: z.enum(['full', 'none']).default('full'),
    on: z
      .array(z.enum(RETRY_ON))
      .min(1)
      .max(RETRY_ON.length)
      .refine((a) => new Set(a).size === a.length, 'must not repeat a code')
      .default(DEFAULT_RETRY_ON),
  })
  .superRefine((p, ctx) => {
    if (p.maxDelaySeconds !== undefined && p.maxDelaySeconds < p.intervalSeconds)
      ctx.addIssue({ code: 'custom', path: ['maxDelaySeconds'], message: 'must be at least intervalSeconds' });
  });
export type RetryPolicy = z.infer<typeof RetryPolicy>;
