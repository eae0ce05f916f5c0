import type { StackProps } from 'aws-cdk-lib';
import type { Route } from '../shared/http/route.ts';
import { PLAN_RATE_LIMITS } from '../shared/config.ts';
import { TABLE } from '../shared/db/table.ts';

/** API Gateway's throttle: steady requests per second and the bucket of a burst. */
export type Throttle = { rateLimit: number; burstLimit: number };
/** `default` is the stage's (every route without a class of its own, and unknown paths). */
export type ThrottleClass = 'default' | NonNullable<Route['throttle']>;
export const THROTTLE_CLASSES: readonly ThrottleClass[] = ['default', 'login', 'trigger', 'approval'];

/**
 * The defaults of the operations settings (docs/deploying.md "Deploying to AWS" lists them). The workers'
 * maximum concurrency keeps a burst of runs from taking the account's Lambda concurrency (1,000 by
 * default) from the API: 50 runs-worker invocations of up to 10 runs each on the main lane, 50 more
 * on the heavy lane (shared/engine/lanes.ts), 10 notification ones.
 */
export const DEFAULTS = {
  runsWorkerConcurrency: 50,
  heavyRunsWorkerConcurrency: 50,
  notifyWorkerConcurrency: 10,
  /** No batching window: a run starts as soon as its message arrives. */
  runsBatchingWindowSeconds: 0,
  /** Days finished runs, their events, approvals and artifacts are kept (DynamoDB TTL, S3 lifecycle). */
  retentionDays: 90,
  /** Days a webhook run that SUCCEEDED is kept (SUCCEEDED_WEBHOOK_RETENTION_DAYS; at most retentionDays). */
  succeededWebhookRetentionDays: 30,
  /** Days an account's audit log entries are kept (AUDIT_RETENTION_DAYS, DynamoDB TTL). */
  auditRetentionDays: 365,
  /** How many times one FAILED run may be retried from its failed step (RETRY_LIMIT). */
  retryLimit: 10,
  /** A release interrupts only the webhook runs nothing can carry on (docs/runs-and-events.md "Restarts, crashes and INTERRUPTED runs"). */
  restartSweep: 'orphaned',
  /** Failed authentications per source address per minute before a failing request gets 429 (AUTH_FAILURE_LIMIT). */
  authFailureLimit: 300,
  /** The account's Lambda concurrency quota per region, AWS's default: the concurrency-headroom alarm fires at 80 % of it. */
  lambdaConcurrencyLimit: 1000,
} as const;

/**
 * The edge throttles, per class. Login gets a low limit of its own; the trigger and approval routes
 * admit one account of the largest plan at its full per-minute budget (the service's own metering
 * refuses each account beyond its plan); every other route keeps the stage's 500 rps (burst 1,000).
 */
export function defaultThrottles(planRateLimits: Partial<Record<string, number>> = {}): Record<ThrottleClass, Throttle> {
  const perMinute = Math.max(...Object.values({ ...PLAN_RATE_LIMITS, ...planRateLimits }).map(Number));
  const planRate = Math.ceil(perMinute / 60);
  return {
    default: { rateLimit: 500, burstLimit: 1000 },
    login: { rateLimit: 5, burstLimit: 10 },
    trigger: { rateLimit: planRate, burstLimit: 2 * planRate },
    approval: { rateLimit: planRate, burstLimit: 2 * planRate },
  };
}

/** Read and write units a second, of the table or one of its indexes. */
export type Units = { read: number; write: number };
/** The table (`table`) and its global secondary indexes, each with throughput of its own. */
export const TABLE_PARTS: readonly string[] = ['table', ...TABLE.indexes.map((ix) => ix.name)];
/** A setting per part of the table: `{ "table": { "write": 20000 }, "GSI2": { "read": 15000 } }`. */
export type PerPart = Partial<Record<string, Partial<Units>>>;

/**
 * DynamoDB's figures the capacity settings and the heat bench's gates are checked against
 * (docs/deploying.md "Quotas"): what a new on-demand table, and each of its indexes, serves at once
 * before it grows (its warm throughput; it can only be raised), and the default per-table quota
 * (Service Quotas "Table-level read/write throughput limit"), which binds the table and each index
 * on its own.
 */
export const DYNAMODB = {
  newOnDemandWarm: { read: 12_000, write: 4_000 } satisfies Units,
  tableQuota: { read: 40_000, write: 40_000 } satisfies Units,
} as const;

/** The runs worker's batch size (its queue's event source; the heat model's full batch). */
export const RUNS_BATCH_SIZE = 10;

/**
 * The target the default warm throughput is sized for (docs/deploying.md "Quotas"): the heat bench's
 * scenario (a), one account's 1,000 one-step webhook runs a second arriving at once on a table that has
 * not grown yet, with a quarter of headroom. Measured (`npm run bench -- heat`): 8.4 write units a run
 * on the table (with the counts' flushes: 0.3 the runs worker's, 0.1 the trigger's), 4 on GSI2 (the active-index entry put at the start, moved at the claim, removed at the
 * end), 1 each on GSI1 and GSI3, no read that the caches leave.
 */
export const WARM_TARGET = {
  scenario: '(a)',
  runsPerSecond: 1000,
  headroom: 1.25,
  writesPerRun: { table: 8.4, GSI1: 1, GSI2: 4, GSI3: 1 },
};

/** `units` with headroom, rounded up to a thousand, never below what a new on-demand table has anyway. */
export const warmFor = (units: number, floor: number) => Math.max(floor, Math.ceil((units * WARM_TARGET.headroom) / 1000) * 1000);

/**
 * The default warm throughput of each part: `warmFor(1,000 runs/s × units a run)`: the table 11,000
 * write units a second (8,400 × 1.25), GSI2 5,000 (4,000 × 1.25), GSI1 and GSI3 AWS's own 4,000 (1,250
 * is under it); reads AWS's own 12,000 everywhere. Raising a part's warm throughput above AWS's is
 * billed once and cannot be undone; a deploy below the part's current value fails.
 */
export const DEFAULT_WARM_THROUGHPUT: Readonly<Record<string, Units>> = Object.fromEntries(
  TABLE_PARTS.map((part) => [
    part,
    {
      read: DYNAMODB.newOnDemandWarm.read,
      write: warmFor(
        WARM_TARGET.runsPerSecond * (WARM_TARGET.writesPerRun[part as keyof typeof WARM_TARGET.writesPerRun] ?? 0),
        DYNAMODB.newOnDemandWarm.write,
      ),
    },
  ]),
);

/**
 * The table's capacity settings, checked: the warm throughput of each part (the defaults, each value
 * given replacing its own) and the optional on-demand maximum (OnDemandThroughput: requests beyond
 * it are throttled; none by default).
 */
export function capacitySettings(props: Pick<FlowgateStackProps, 'warmThroughput' | 'onDemandThroughput'>): {
  warm: Record<string, Units>;
  max: Record<string, Partial<Units>>;
} {
  const check = (setting: string, given: PerPart | undefined, min: (part: string, op: keyof Units) => number) => {
    for (const [part, units] of Object.entries(given ?? {})) {
      if (!TABLE_PARTS.includes(part)) throw new Error(`${setting}: unknown part ${part}; parts: ${TABLE_PARTS.join(', ')}`);
      for (const [op, n] of Object.entries(units ?? {})) {
        if (op !== 'read' && op !== 'write') throw new Error(`${setting}.${part}: unknown key ${op}; keys: read, write`);
        if (!Number.isInteger(n) || (n as number) < min(part, op)) {
          throw new Error(`${setting}.${part}.${op} must be a whole number of units a second of at least ${min(part, op)}, got ${n}`);
        }
      }
    }
  };
  // AWS's own warm throughput of a new on-demand part is the least there is: a lower value means nothing.
  check('warmThroughput', props.warmThroughput, (_, op) => DYNAMODB.newOnDemandWarm[op]);
  check('onDemandThroughput', props.onDemandThroughput, () => 1);
  const warm = Object.fromEntries(
    TABLE_PARTS.map((part) => [part, { ...(DEFAULT_WARM_THROUGHPUT[part] as Units), ...props.warmThroughput?.[part] }]),
  );
  const max = Object.fromEntries(
    TABLE_PARTS.flatMap((part) => {
      const m = props.onDemandThroughput?.[part];
      return m && Object.keys(m).length ? [[part, { ...m }]] : [];
    }),
  );
  return { warm, max };
}

/** The stack's settings (infra/app.ts reads them from the CDK context). */
export type FlowgateStackProps = StackProps & {
  stage: string;
  /**
   * The stack's workflows (docs/workflows-as-code.md "With the stack"): a folder of workflow files applied
   * to one account at every deployment (`workflowsDir`, `workflowsAccount`, `workflowsOwner`, `workflowsPrune`).
   */
  workflows?: { dir: string; account: string; owner?: string; prune?: boolean };
  /** Table deletion protection and RETAIN of stateful resources; default true. */
  deletionProtection?: boolean;
  /** JSON like `{"pro": 20}`, passed to every function as RATE_LIMITS. */
  rateLimits?: string;
  /** Comma-separated CIDRs whose X-Forwarded-For is trusted (TRUSTED_PROXIES). */
  trustedProxies?: string;
  /** Base of the links the service builds (PUBLIC_BASE_URL); default the custom domain, else the API endpoint. */
  publicBaseUrl?: string;
  /** Comma-separated hosts or CIDRs http_request steps may call despite the private-address rule (HTTP_STEP_ALLOWLIST). */
  httpStepAllowlist?: string;
  /**
   * ARN of an existing KMS key (same region) that seals account secrets (SECRETS_KEY_ID); default a
   * key the stack creates, with yearly rotation. Its key policy must let the account's IAM policies grant its use.
   */
  secretsKeyArn?: string;
  /**
   * The verified SES identity (a domain or an address) approval mail goes out under (SES_IDENTITY):
   * the notify worker (and a channel's test) may send from it alone. Absent: email channels cannot send.
   */
  sesIdentity?: string;
  /** Per-function reserved concurrency; default none (the account pool). */
  reservedConcurrency?: number;
  /** Maximum concurrent invocations of the runs worker by its queue (2-1,000). */
  runsWorkerConcurrency?: number;
  /** Maximum concurrent invocations of the runs worker by the heavy lane's queue (2-1,000); default 50. */
  heavyRunsWorkerConcurrency?: number;
  /** Requests a minute above which an account's new webhook runs go to the heavy lane (`heavyAccountRequestsPerMinute` below). */
  heavyAccountRequestsPerMinute?: number;
  /** Maximum concurrent invocations of the notifications worker by its queue (2-1,000). */
  notifyWorkerConcurrency?: number;
  /** Seconds the runs queue gathers messages before invoking the worker; 0 (the default): none. */
  runsBatchingWindowSeconds?: number;
  /**
   * Days a finished run, its events, approvals, audit records and artifacts are kept: the functions'
   * RETENTION_DAYS (DynamoDB TTL) and the artifacts bucket's lifecycle rule, from one setting.
   */
  retentionDays?: number;
  /**
   * Days a webhook run that SUCCEEDED is kept, with its last events (SUCCEEDED_WEBHOOK_RETENTION_DAYS,
   * 1-3,650, at most `retentionDays`); default 30. Failed, cancelled and interrupted runs, and runs
   * started otherwise, keep `retentionDays`.
   */
  succeededWebhookRetentionDays?: number;
  /** Days an account's audit log entries are kept (AUDIT_RETENTION_DAYS, DynamoDB TTL, 1-3,650); default 365. */
  auditRetentionDays?: number;
  /** How many times one FAILED run may be retried from its failed step (RETRY_LIMIT, 0-1,000); default 10. */
  retryLimit?: number;
  /**
   * Which webhook runs in progress a release interrupts (RESTART_SWEEP): `orphaned` (default) only
   * those nothing can carry on, `all` every one (a hard cut).
   */
  restartSweep?: 'orphaned' | 'all';
  /** Failed authentications per source address per minute (AUTH_FAILURE_LIMIT); default 300. */
  authFailureLimit?: number;
  /** The share (0–1) of high-volume routes' successful requests that are logged (REQUEST_LOG_SAMPLE); default 1. */
  requestLogSample?: number;
  /**
   * Warm throughput (read and write units a second served at once) of the table and each index, over
   * `DEFAULT_WARM_THROUGHPUT`: `{ "table": { "write": 125000 }, "GSI2": { "write": 50000 } }`.
   */
  warmThroughput?: PerPart;
  /** Most read or write request units a second of the table and each index (OnDemandThroughput); default none. */
  onDemandThroughput?: PerPart;
  /** Edge throttles per class of route (`Route.throttle`), over `defaultThrottles()`. */
  throttles?: Partial<Record<ThrottleClass, Throttle>>;
  /**
   * Custom domain (`api.example.com`) with an ACM certificate ARN of the same region; both or neither.
   * Point a CNAME (or Route 53 alias) at the `CustomDomainTarget` output.
   */
  domainName?: string;
  certificateArn?: string;
  /** Turn off the default `execute-api` endpoint, so the custom domain (and what fronts it) is the only way in. */
  disableExecuteApiEndpoint?: boolean;
  /** Origins browsers may call the API from (CORS); default none. */
  corsOrigins?: readonly string[];
  /** Subscribe this address to the alarm topic (created unless `alarmTopicArn` is given). */
  alarmEmail?: string;
  /** Send every alarm (and its recovery) to this existing SNS topic. */
  alarmTopicArn?: string;
  /** A prod stage without an alarm destination is refused unless this says it is meant. */
  waiveAlarmDestination?: boolean;
  /** X-Ray active tracing of every function; default off (docs/deploying.md "Operating"). */
  tracing?: boolean;
  /**
   * `false`: the canaries of this deploy ignore their rollback alarms (docs/deploying.md "Releases"), for a
   * fix deployed while those alarms fire; default true.
   */
  rollbackAlarms?: boolean;
  /** The account's Lambda concurrency quota in the stack's region (the headroom alarm's 100 %); default 1,000. */
  lambdaConcurrencyLimit?: number;
  // No `webAclArn`: AWS WAF cannot be associated with an HTTP API (only REST API stages, CloudFront,
  // ALB, AppSync, ...), so a CfnWebACLAssociation on this stage fails at deploy. The way to put WAF in
  // front is a CloudFront distribution with the web ACL whose origin is the API (docs/deploying.md, "Deploying to AWS").
};

/** The settings the functions' environment and the bucket's lifecycle share, checked. */
export function retentionSettings(
  props: Pick<FlowgateStackProps, 'retentionDays' | 'retryLimit' | 'auditRetentionDays' | 'succeededWebhookRetentionDays'>,
) {
  const retentionDays = props.retentionDays ?? DEFAULTS.retentionDays;
  const auditRetentionDays = props.auditRetentionDays ?? DEFAULTS.auditRetentionDays;
  if (!Number.isInteger(auditRetentionDays) || auditRetentionDays < 1 || auditRetentionDays > 3650) {
    throw new Error(`auditRetentionDays must be a whole number of days from 1 to 3650, got ${auditRetentionDays}`);
  }
  const retryLimit = props.retryLimit ?? DEFAULTS.retryLimit;
  if (!Number.isInteger(retryLimit) || retryLimit < 0 || retryLimit > 1000) {
    throw new Error(`retryLimit must be a whole number from 0 to 1000, got ${retryLimit}`);
  }
  if (!Number.isInteger(retentionDays) || retentionDays < 1 || retentionDays > 3650) {
    throw new Error(`retentionDays must be a whole number of days from 1 to 3650, got ${retentionDays}`);
  }
  const succeededWebhookRetentionDays =
    props.succeededWebhookRetentionDays ?? Math.min(DEFAULTS.succeededWebhookRetentionDays, retentionDays);
  if (
    !Number.isInteger(succeededWebhookRetentionDays) ||
    succeededWebhookRetentionDays < 1 ||
    succeededWebhookRetentionDays > retentionDays
  ) {
    throw new Error(
      `succeededWebhookRetentionDays must be a whole number of days from 1 to retentionDays (${retentionDays}), got ${succeededWebhookRetentionDays}`,
    );
  }
  return { retentionDays, retryLimit, auditRetentionDays, succeededWebhookRetentionDays };
}

/** The account's Lambda concurrency quota the headroom alarm measures against, checked. */
export function lambdaConcurrencyLimit(props: Pick<FlowgateStackProps, 'lambdaConcurrencyLimit'>): number {
  const limit = props.lambdaConcurrencyLimit ?? DEFAULTS.lambdaConcurrencyLimit;
  if (!Number.isInteger(limit) || limit < 10) throw new Error(`lambdaConcurrencyLimit must be a whole number of at least 10, got ${limit}`);
  return limit;
}

/**
 * The requests a minute above which an account is heavy (HEAVY_ACCOUNT_REQUESTS_PER_MINUTE), checked; by default half the runs
 * the main lane holds at once (250): were every run of the minute still in flight, none under it could fill the lane alone.
 */
export function heavyAccountRequestsPerMinute(props: Pick<FlowgateStackProps, 'heavyAccountRequestsPerMinute' | 'runsWorkerConcurrency'>) {
  const runs = props.runsWorkerConcurrency ?? DEFAULTS.runsWorkerConcurrency;
  const value = props.heavyAccountRequestsPerMinute ?? Math.max(1, Math.floor((runs * RUNS_BATCH_SIZE) / 2));
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`heavyAccountRequestsPerMinute must be a whole number of requests of at least 1, got ${value}`);
  }
  return value;
}
