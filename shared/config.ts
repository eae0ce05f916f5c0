import * as z from 'zod';

/** Per-minute request budgets per plan (docs/api.md "Credentials and errors"); `RATE_LIMITS` overrides entries. */
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

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/**
 * Every setting the functions read from their environment, one line each. A setting without a
 * default is required by the functions that declare it (their route's grants, `FUNCTION_CONFIG`
 * for workers and sweeps): they fail at import, naming it, when it is missing or malformed. To add
 * one: a line here; a required one also goes into the declaration of the functions that read it.
 */
const SETTINGS = {
  TABLE_NAME: z.string().regex(/^[\w.-]{3,255}$/, 'must be a DynamoDB table name'),
  RUNS_QUEUE_URL: httpUrl,
  /**
   * The heavy lane (shared/engine/lanes.ts): the runs queue the new runs of heavy accounts go to. Unset:
   * there is none, and every run message goes to RUNS_QUEUE_URL.
   */
  HEAVY_RUNS_QUEUE_URL: httpUrl.optional(),
  /**
   * An account whose requests in the current rate window (a minute, every open-platform request counted)
   * exceed this is heavy: its new webhook runs go to the heavy lane (shared/engine/lanes.ts). The stack
   * sets it (`heavyAccountRequestsPerMinute`, by default half the runs the main lane holds at once).
   */
  HEAVY_ACCOUNT_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(250),
  NOTIFY_QUEUE_URL: httpUrl,
  ARTIFACTS_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name'),
  /** Base of the links the service builds (approval links). */
  PUBLIC_BASE_URL: httpUrl,
  TRUSTED_PROXIES: csv,
  RATE_LIMITS: RateLimits,
  HTTP_STEP_ALLOWLIST: csv,
  /**
   * The share (0–1) of the successful requests of high-volume routes (webhook triggers, v1 reads) that
   * get an access log line: CloudWatch Logs bills every byte. Refusals, errors and every other route
   * always log (shared/http/middleware/request-log.ts).
   */
  REQUEST_LOG_SAMPLE: z.coerce.number().min(0).max(1).default(1),
  /** Signs list cursors in local mode and tests; deployed functions read the key named by CURSOR_SECRET_ARN. */
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
  /**
   * A webhook run that SUCCEEDED is deleted this many days after it finished instead (never later than
   * RETENTION_DAYS): with its last events; the events written before its end keep RETENTION_DAYS.
   */
  SUCCEEDED_WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** An account's audit log entries are deleted this many days after they were written (DynamoDB TTL). */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  /**
   * The audit log's settle window: `GET /api/audit` (and its NDJSON export) leaves out the entries whose
   * `at` is less than this many seconds ago. An entry is timed when its request began and stored before
   * its function ends, so once this window has passed no entry of that time can still be stored: a
   * reader following the log (polling, walking the cursor) gets every entry exactly once
   * (docs/audit.md). Every function that records entries has a shorter timeout
   * (test/unit/audit-settle.test.ts). 0: none (the tests' default; their own test sets one).
   */
  AUDIT_SETTLE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** How many times one FAILED run may be retried from its failed step (`POST /api/v1/executions/{id}/retry`). */
  RETRY_LIMIT: z.coerce.number().int().min(0).max(1000).default(10),
  /**
   * Approval reminders and escalations the scheduled sweep sends in one pass (once a minute), at most;
   * the rest wait for the next pass. Sized for a million pending approvals reminded hourly (16,667 a
   * minute); a pass also stops taking more once its function is 15 s from its time limit.
   */
  SWEEP_REMINDERS_PER_PASS: z.coerce.number().int().min(25).max(1_000_000).default(20_000),
  /**
   * Shards of the write-sharded listings (an account's runs, a workflow's: shared/db/shards.ts), 1-32.
   * It may only grow: an item keeps the shard it was written with, and a listing reads shards 0..N-1.
   */
  LIST_SHARDS: z.coerce.number().int().min(1).max(32).default(4),
  /**
   * Which webhook runs in progress the startup sweep after a release interrupts: `orphaned` (the
   * default on AWS: expired leases, PENDING runs whose message is long overdue) or `all` (a hard cut).
   * Local mode always sweeps `all`: `npm start` is a real process restart.
   */
  RESTART_SWEEP: z.enum(['orphaned', 'all']).default('orphaned'),
  /**
   * How long after its message can first be received a run handed to one may go unclaimed before the
   * scheduled sweep sends the message again (docs/runs-and-events.md). Tests that wait for it shorten it.
   */
  DISPATCH_GRACE_SECONDS: z.coerce.number().int().min(5).max(900).default(120),
  /**
   * `on`: a webhook run whose steps only change the run (`set`, `switch`, `fail`, loops of them)
   * finishes in its trigger, written once, with no queue message (docs/runs-and-events.md). `off`:
   * every run goes through the runs queue (the benches measure the queued path with it).
   */
  INLINE_RUNS: z.enum(['on', 'off']).default('on'),
  /** Account secrets' keyring on AWS: the KMS key (id, ARN or alias) their data keys are made under. */
  SECRETS_KEY_ID: z.string().min(1).optional(),
  /** Account secrets' keyring locally (without SECRETS_KEY_ID): a key file, created 0600 on first use. */
  SECRETS_KEY_FILE: z.string().min(1).optional(),
  /** s3rver (local mode) only understands path-style addressing. */
  S3_FORCE_PATH_STYLE: z.stringbool().default(false),
  /** Approval channels: the Slack Web API's base URL (a listener of their own in tests). */
  SLACK_API_URL: httpUrl.default('https://slack.com/api'),
  /**
   * Approval channels: the hosts a Slack interaction's `response_url` may name (Slack's own; a
   * listener of their own in tests, an IPv6 address in brackets). A `response_url` elsewhere is never
   * posted to; one here still goes through the egress rules of `http_request` (HTTP_STEP_ALLOWLIST).
   */
  SLACK_RESPONSE_HOSTS: z
    .string()
    .default('hooks.slack.com')
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim().toLowerCase())
        .filter(Boolean),
    ),
  /**
   * Approval channels: the verified SES identity mail goes out under (a domain or an address; the
   * stack grants ses:SendEmail on it alone). Set: an email channel's `from` must belong to it. The
   * SES endpoint is the SDK's own setting, AWS_ENDPOINT_URL_SESV2 (local mode: aws-ses-v2-local).
   */
  SES_IDENTITY: z.string().min(3).max(320).optional(),
  /** Reviewers' links (shared/domain/review-links.ts) locally: their signing key file, created 0600 on first use. */
  REVIEW_LINK_KEY_FILE: z.string().min(1).optional(),
  /** Longest a reviewer's link stays valid, in days (an approval's earlier deadline ends it sooner). */
  REVIEW_LINK_MAX_DAYS: z.coerce.number().positive().max(365).default(30),
  /**
   * The delivery log's retry unit in seconds (shared/domain/deliveries.ts): a failed delivery is tried
   * again after 1, 4, 15 and 40 of them (5 attempts over an hour by default); tests shorten it.
   */
  DELIVERY_RETRY_SECONDS: z.coerce.number().positive().max(600).default(60),
  /** Schedules on AWS (shared/schedules/clock.ts): the schedule group, the role the scheduler assumes, the fire function and the DLQ. Unset locally: the in-process scheduler. */
  SCHEDULE_GROUP: z
    .string()
    .regex(/^[\w.-]{1,64}$/, 'must be a schedule group name')
    .optional(),
  SCHEDULER_ROLE_ARN: z.string().startsWith('arn:').optional(),
  SCHEDULE_TARGET_ARN: z.string().startsWith('arn:').optional(),
  SCHEDULE_DLQ_ARN: z.string().startsWith('arn:').optional(),
} satisfies Record<string, z.ZodType>;

export type Setting = keyof typeof SETTINGS;
type Settings = { [K in Setting]: z.output<(typeof SETTINGS)[K]> };
export type Config = Settings & { rateLimits: Record<Plan, number> };

/** What a function may touch; the CDK stack turns each into a least-privilege grant and the settings below. */
export type Grant =
  | 'table:read'
  | 'table:write'
  | 'queue:send'
  | 'bucket:read'
  | 'bucket:write'
  /** Seal account secrets (a data key from the secrets key) / open them. */
  | 'secrets:encrypt'
  | 'secrets:decrypt'
  /** Send mail through SES, from the stack's verified identity (approval channels). */
  | 'email:send'
  /** Sign and check reviewers' links (the key: REVIEW_LINK_SECRET_ARN on AWS, REVIEW_LINK_KEY_FILE locally). */
  | 'links:sign'
  /** UpdateItem alone (the notifications worker's delivery log: each attempt is one update). */
  | 'table:update'
  /** Put an account audit entry (AUDIT_KEYS, an IAM `dynamodb:LeadingKeys` condition) and no other item: what only records. */
  | 'table:audit'
  /**
   * PutItem and UpdateItem on the notifications worker's own key families only (the delivery log and
   * approval messages: NOTIFY_LOG_KEYS, an IAM `dynamodb:LeadingKeys` condition): no other item.
   */
  | 'table:log'
  /** Put a notification back on the notifications queue (one message's next attempt), and no other queue. */
  | 'queue:requeue'
  /** Create, update, delete and list EventBridge Scheduler schedules in the stack's group, passing only its scheduler role. */
  | 'schedules:manage';

/** The settings each grant gives a function (the CDK stack sets them when it binds the resource). */
export const GRANT_SETTINGS = {
  'table:read': ['TABLE_NAME'],
  'table:write': ['TABLE_NAME'],
  // Whatever starts or moves runs also emits events, which go to the notifications queue; a run's
  // message goes to the heavy lane's queue when it is a heavy account's (shared/engine/lanes.ts).
  'queue:send': ['RUNS_QUEUE_URL', 'HEAVY_RUNS_QUEUE_URL', 'NOTIFY_QUEUE_URL'],
  'bucket:read': ['ARTIFACTS_BUCKET'],
  'bucket:write': ['ARTIFACTS_BUCKET'],
  // SECRETS_KEY_ID on AWS, SECRETS_KEY_FILE locally: either does, so neither is required by itself
  // (the keyring refuses to work without one: shared/keyring.ts).
  'secrets:encrypt': [],
  'secrets:decrypt': [],
  'email:send': [],
  'links:sign': [],
  'table:update': ['TABLE_NAME'],
  'table:audit': ['TABLE_NAME'],
  'table:log': ['TABLE_NAME'],
  'queue:requeue': ['NOTIFY_QUEUE_URL'],
  'schedules:manage': ['SCHEDULE_GROUP', 'SCHEDULER_ROLE_ARN', 'SCHEDULE_TARGET_ARN', 'SCHEDULE_DLQ_ARN'],
} as const satisfies Record<Grant, readonly Setting[]>;

/** The settings a function with these grants needs, plus `extra`. */
export const settingsFor = (grants: readonly Grant[], extra: readonly Setting[] = []): Setting[] => [
  ...new Set([...grants.flatMap((g) => GRANT_SETTINGS[g]), ...extra]),
];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const parsed = new Map<Setting, unknown>();

function read<K extends Setting>(name: K): Settings[K] {
  if (!parsed.has(name)) {
    // An empty value is no value: the stack sets some settings to '' when they are not given.
    const raw = process.env[name] === '' ? undefined : process.env[name];
    const result = SETTINGS[name].safeParse(raw);
    if (!result.success) {
      throw new ConfigError(
        raw === undefined ? `${name} is not set` : `${name} is malformed: ${result.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    parsed.set(name, result.data);
  }
  return parsed.get(name) as Settings[K];
}

const view = new Proxy({} as Config, {
  get: (_, key) => {
    if (key === 'rateLimits') return { ...PLAN_RATE_LIMITS, ...read('RATE_LIMITS') };
    if (typeof key === 'string' && Object.hasOwn(SETTINGS, key)) return read(key as Setting);
    return undefined;
  },
});

/**
 * The environment's settings, each parsed on first read and kept. A required setting that is
 * missing or malformed throws a `ConfigError` naming it; `requireConfig` makes that happen at a
 * function's cold start instead of in a request.
 */
export function config(): Config {
  return view;
}

/**
 * Fail now, naming every missing or malformed setting of `names`: called at import by each function
 * (the HTTP handlers through `http()`, the workers and sweeps at their top), so a function deployed
 * without a variable it needs fails its cold start, not a request.
 */
export function requireConfig(names: readonly Setting[]): void {
  const problems: string[] = [];
  for (const name of names) {
    try {
      read(name);
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length) throw new ConfigError(`Configuration: ${problems.join('; ')}`);
}

/** Forget the parsed environment (the local stack and tests that change it). */
export function resetConfig(): void {
  parsed.clear();
}
