import * as z from 'zod';

/** Per-minute request budgets per plan (API.md "Rate limits"); `RATE_LIMITS` overrides entries. */
export const PLAN_RATE_LIMITS = { free: 60, pro: 600, team: 3000, enterprise: 20000 } as const;

export const Plan = z.enum(['free', 'pro', 'team', 'enterprise']);
export type Plan = z.infer<typeof Plan>;

const csv = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

const RateLimits = z
  .string()
  .default('{}')
  .transform((s, ctx) => {
    try {
      return z.partialRecord(Plan, z.number().int().positive()).parse(JSON.parse(s));
    } catch {
      ctx.addIssue({ code: 'custom', message: 'RATE_LIMITS must be JSON like {"pro": 20}' });
      return z.NEVER;
    }
  });

const Env = z.object({
  TABLE_NAME: z.string().min(1).optional(),
  RUNS_QUEUE_URL: z.string().optional(),
  NOTIFY_QUEUE_URL: z.string().optional(),
  ARTIFACTS_BUCKET: z.string().optional(),
  PUBLIC_BASE_URL: z.string().optional(),
  TRUSTED_PROXIES: csv,
  RATE_LIMITS: RateLimits,
  HTTP_STEP_ALLOWLIST: csv,
  /** Signs list cursors; required on AWS (the stack sets it), optional locally. */
  CURSOR_SECRET: z.string().min(32).optional(),
  SESSION_TTL_HOURS: z.coerce.number().positive().default(12),
  /** scrypt's N for new password hashes (passwords.ts); the default is the production figure, tests lower it. */
  PASSWORD_SCRYPT_N: z.coerce
    .number()
    .int()
    .min(2 ** 14)
    .max(2 ** 18)
    .refine((n) => (n & (n - 1)) === 0, 'a power of two')
    .default(2 ** 17),
  /** Failed authentications allowed per source address per minute, on every route (auth-failures.ts). */
  AUTH_FAILURE_LIMIT: z.coerce.number().int().min(1).default(300),
  /** Finished runs, their events, approvals and artifacts are deleted this many days later (DynamoDB TTL, S3 lifecycle). */
  RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** How many times one FAILED run may be retried from its failed step (`POST /api/v1/executions/{id}/retry`). */
  RETRY_LIMIT: z.coerce.number().int().min(0).max(1000).default(10),
  /**
   * Which webhook runs in progress the startup sweep after a release interrupts: `orphaned` (the
   * default on AWS: expired leases, PENDING runs whose message is long overdue) or `all` (a hard cut).
   * Local mode always sweeps `all`: `npm start` is a real process restart.
   */
  RESTART_SWEEP: z.enum(['orphaned', 'all']).default('orphaned'),
  /** Account secrets' keyring on AWS: the KMS key (id, ARN or alias) their data keys are made under. */
  SECRETS_KEY_ID: z.string().min(1).optional(),
  /** Account secrets' keyring locally (without SECRETS_KEY_ID): a key file, created 0600 on first use. */
  SECRETS_KEY_FILE: z.string().min(1).optional(),
  /** s3rver (local mode) only understands path-style addressing. */
  S3_FORCE_PATH_STYLE: z.stringbool().default(false),
});
export type Config = z.infer<typeof Env> & { rateLimits: Record<Plan, number> };

let cached: Config | undefined;

/**
 * The environment, parsed once. Read lazily so the local server can set the environment before the
 * first handler runs; on Lambda the first call happens during the first request of a cold start
 * and a missing variable fails it loudly.
 */
export function config(): Config {
  if (!cached) {
    const env = Env.parse(process.env);
    cached = { ...env, rateLimits: { ...PLAN_RATE_LIMITS, ...env.RATE_LIMITS } };
  }
  return cached;
}

/** Forget the parsed environment (tests that change it). */
export function resetConfig(): void {
  cached = undefined;
}
