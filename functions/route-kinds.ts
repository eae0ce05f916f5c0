// The route table's shared vocabulary: auth kinds, grant sets and limits that several routes use.
// Each route's own module (`functions/<handler>.route.ts`) picks from these.

/** A route's domain refusals of one status: `...refuses(409, 'EXECUTION_FINISHED')`. */
export const refuses = (status: number, ...codes: string[]) => codes.map((code) => ({ status, code }));
/** Saving a definition that references an account secret it may not use (where it may go, who may use it). */
export const secretUseErrors = [...refuses(400, 'SECRET_NOT_ALLOWED'), ...refuses(403, 'SECRET_NOT_ALLOWED')];
/** Listing with a cursor. */
export const cursorErrors = refuses(400, 'INVALID_CURSOR');
/** Requests that take an `Idempotency-Key`. */
export const idempotencyErrors = [...refuses(400, 'INVALID_IDEMPOTENCY_KEY'), ...refuses(409, 'IDEMPOTENCY_KEY_REUSED')];
/** Deciding an approval, by any channel. */
export const decisionErrors = [
  ...refuses(403, 'NOT_A_REVIEWER'),
  ...refuses(404, 'APPROVAL_NOT_FOUND'),
  ...refuses(409, 'APPROVAL_ALREADY_HANDLED', 'REVIEWER_ALREADY_DECIDED'),
];

export const session = { kind: 'session' } as const;
export const admin = { kind: 'session', admin: true } as const;
/** Console routes a program may read with an API key too: the audit log (`AUDIT_READ`), a workflow's versions (`WORKFLOW_READ`). */
export const auditReaders = { kind: 'session', keyScope: 'AUDIT_READ' } as const;
export const workflowReaders = { kind: 'session', keyScope: 'WORKFLOW_READ' } as const;
export const none = { kind: 'none' } as const;
/** A console page: the browser's session cookie (shared/console/). */
export const consolePage = { kind: 'console' } as const;
export const consoleAdmin = { kind: 'console', admin: true } as const;
/**
 * The console's functions, split by what they may touch: a page's route names the one that serves it
 * (`functions/http/console/<name>.ts`, one router each), which gets the union of its pages' grants.
 * `read`: the pages that only read (every GET); `change`: the forms that change things; `secrets`: the
 * forms that seal or open account secrets and channel credentials (KMS), and send a channel's test.
 */
export const CONSOLE_FUNCTIONS = { read: 'http/console/read', change: 'http/console/change', secrets: 'http/console/secrets' } as const;
/** API-key routes that only read take `read` too: the stack adds the UpdateItem their metering needs. */
export const read = ['table:read'] as const;
export const readWrite = ['table:read', 'table:write'] as const;
export const startsRuns = ['table:read', 'table:write', 'queue:send'] as const;
export const wfRead = { kind: 'apiKey', scope: 'WORKFLOW_READ' } as const;
export const wfExecute = { kind: 'apiKey', scope: 'WORKFLOW_EXECUTE' } as const;
export const webhook = { kind: 'webhook' } as const;
/** The callback routes: the callback's own token. */
export const callbackToken = { kind: 'callback' } as const;
/** A callback report's body: 256 KiB. */
export const CALLBACK_BYTES = 256 * 1024;
/** The trigger also keeps large payloads in the artifacts bucket. */
export const triggers = ['table:read', 'table:write', 'queue:send', 'bucket:write'] as const;
export const approvalPost = { kind: 'apiKey', scope: 'APPROVAL_RESPOND', missingScopeStatus: 401 } as const;
export const approvalLink = { kind: 'apiKey', scope: 'APPROVAL_RESPOND', missingScopeStatus: 401, allowQuery: true } as const;
export const approvalV1 = { kind: 'apiKey', scope: 'APPROVAL_RESPOND' } as const;
export const decides = startsRuns;
/** The spec's trigger body limit: 1 MiB. */
export const TRIGGER_BYTES = 1024 * 1024;
/** Definitions can be large; 256 KiB leaves room for 100 steps with forms and templates. */
export const DEFINITION_BYTES = 256 * 1024;
/** Writing an account secret seals it under a fresh data key of the secrets key. */
export const sealsSecrets = ['table:read', 'table:write', 'secrets:encrypt'] as const;
/** Schedule routes: the table, and EventBridge Scheduler in the stack's group (its schedules; pass its role only). */
export const managesSchedules = ['table:read', 'table:write', 'schedules:manage'] as const;
/** A manual fire also starts a run, as the v1 start does. */
export const firesSchedules = ['table:read', 'table:write', 'queue:send', 'schedules:manage'] as const;
