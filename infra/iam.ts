import { WORKERS, type Worker } from '../functions/bindings.ts';
import type { Grant } from '../shared/config.ts';
import { AUDIT_KEYS, AUTH_FAILURE_KEYS, METER_KEYS, NOTIFY_LOG_KEYS, TABLE } from '../shared/db/table.ts';
import type { Route } from '../shared/http/route.ts';

/**
 * Every function's IAM policy, as data: the CDK stack turns these statements into each role's policy
 * (infra/constructs/route-function.ts) and the local stack evaluates the same statements on every AWS
 * SDK call a function makes while it handles an invocation (infra/local/iam.ts). One source, so what
 * the tests prove is what AWS allows: test/infra/iam.test.ts pins the synthesized template to it.
 */

/**
 * What a function may do beyond its route's grants: metering an API-key request, counting a failed
 * authentication, and what AWS's own integrations do with the function's role (an SQS event source
 * receives and deletes with it, the audit stream is read with it) or what only one function does.
 */
export type FunctionGrant =
  | Grant
  /** The counters an API-key request updates: the account's rate-limit window and the key's use. */
  | 'table:meter'
  /** The per-address failed-authentication counter (every route that authenticates). */
  | 'table:authfail'
  /** The SQS event sources of the runs queues (both lanes) / the notifications queue (they poll with the function's role). */
  | 'queue:consume-runs'
  | 'queue:consume-notify'
  /** The schedule fire deletes the timers of gone or finished schedules, nothing else. */
  | 'schedules:delete'
  /** The startup sweep reads the runs queues' message counts (a deep queue's PENDING runs are not orphaned). */
  | 'queue:backlog'
  /** Drift repair lists the group's schedules (ListSchedules has no resource type). */
  | 'schedules:list'
  /** Lambda's async queue delivers a failed event's record to the on-failure queue with the function's role. */
  | 'async:on-failure'
  /** Sign and check list cursors (the cursor key: CURSOR_SECRET_ARN on AWS, CURSOR_SECRET locally). */
  | 'cursors:sign'
  /** The audit-events worker: the table's stream (its event source), the default bus, and the stream's DLQ. */
  | 'stream:read'
  | 'events:put';

/**
 * The DynamoDB actions the code issues (shared/db, shared/domain, shared/engine): no Scan, no stream
 * or DescribeTable. IAM checks a TransactWriteItems item by item, as the
 * put, update, delete or condition check it holds, and a TransactGetItems as GetItems.
 */
export const TABLE_ACTIONS = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
  // BatchWriteItem: a run's first items, which cannot exist yet, in one request (shared/db/batch.ts).
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem', 'dynamodb:BatchWriteItem'],
  update: ['dynamodb:UpdateItem'],
  log: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
} as const;

/** What an SQS event source does with its function's role (CDK's `grantConsumeMessages`). */
export const CONSUME_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
] as const;

/** The ARNs the grants name: CDK tokens in the stack, the emulators' names locally. */
export type Arns = {
  table: string;
  tableStream: string;
  queue: string;
  /** The heavy lane's runs queue (shared/engine/lanes.ts). */
  heavyQueue: string;
  notifyQueue: string;
  auditDlq: string;
  asyncFailures: string;
  bucket: string;
  secretsKey: string;
  reviewLinkSecret: string;
  cursorSecret: string;
  /** The verified SES identity's ARN; absent: no function may send mail. */
  sesIdentity?: string;
  /** The stack's schedules (`…:schedule/<group>/*`). */
  schedules: string;
  schedulerRole: string;
  eventBus: string;
};

export type Statement = {
  actions: readonly string[];
  resources: readonly string[];
  conditions?: Record<string, Record<string, readonly string[] | string>>;
};

/** UpdateItem (or `actions`) on the table, only on items whose partition key starts with one of `prefixes`. */
const leadingKeys = (actions: readonly string[], table: string, prefixes: readonly string[]): Statement => ({
  actions,
  resources: [table],
  conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes.map((k) => `${k}*`) } },
});

/** The statements of one grant. */
function statementsOfGrant(grant: FunctionGrant, a: Arns): Statement[] {
  switch (grant) {
    case 'table:read':
      // Queries name the table or one of its own indexes, each by name.
      return [{ actions: TABLE_ACTIONS.read, resources: [a.table, ...TABLE.indexes.map((ix) => `${a.table}/index/${ix.name}`)] }];
    case 'table:write':
      return [{ actions: TABLE_ACTIONS.write, resources: [a.table] }];
    case 'table:update':
      return [{ actions: TABLE_ACTIONS.update, resources: [a.table] }];
    case 'table:meter':
      return [leadingKeys(TABLE_ACTIONS.update, a.table, METER_KEYS)];
    case 'table:audit':
      return [leadingKeys(['dynamodb:PutItem'], a.table, AUDIT_KEYS)];
    case 'table:authfail':
      return [leadingKeys(TABLE_ACTIONS.update, a.table, AUTH_FAILURE_KEYS)];
    // Items whose partition key starts with one of the worker's own prefixes, and no other.
    case 'table:log':
      return [leadingKeys(TABLE_ACTIONS.log, a.table, NOTIFY_LOG_KEYS)];
    case 'queue:requeue':
      return [{ actions: ['sqs:SendMessage'], resources: [a.notifyQueue] }];
    case 'queue:send':
      // Whatever starts or moves runs also emits events, which go to the notifications queue; a run's
      // message may go to either lane (shared/engine/lanes.ts).
      return [{ actions: ['sqs:SendMessage'], resources: [a.queue, a.heavyQueue, a.notifyQueue] }];
    case 'queue:backlog':
      return [{ actions: ['sqs:GetQueueAttributes'], resources: [a.queue, a.heavyQueue] }];
    case 'queue:consume-runs':
      return [{ actions: CONSUME_ACTIONS, resources: [a.queue, a.heavyQueue] }];
    case 'queue:consume-notify':
      return [{ actions: CONSUME_ACTIONS, resources: [a.notifyQueue] }];
    // The exact object actions the code uses (presigned GetObject, PutObject); the L2 grants would
    // add s3:GetObject*, s3:List*, s3:GetBucket*, s3:Abort* and the object-lock and tagging puts.
    case 'bucket:read':
      return [{ actions: ['s3:GetObject'], resources: [`${a.bucket}/*`] }];
    case 'bucket:write':
      return [{ actions: ['s3:PutObject'], resources: [`${a.bucket}/*`] }];
    // Account secrets (shared/keyring.ts): sealing needs a data key, opening one Decrypt; never both.
    case 'secrets:encrypt':
      return [{ actions: ['kms:GenerateDataKey'], resources: [a.secretsKey] }];
    case 'secrets:decrypt':
      return [{ actions: ['kms:Decrypt'], resources: [a.secretsKey] }];
    // Approval mail: SendEmail from the stack's verified identity only (no identity: none at all).
    case 'email:send':
      return a.sesIdentity ? [{ actions: ['ses:SendEmail'], resources: [a.sesIdentity] }] : [];
    // Reviewers' links (shared/domain/review-links.ts): the functions that sign or check them read the key, nothing else does.
    case 'links:sign':
      return [{ actions: ['secretsmanager:GetSecretValue'], resources: [a.reviewLinkSecret] }];
    // The schedules of the stack's group only (no other group, no ListSchedules: the sweep alone
    // lists), passing the scheduler's role only, and only to EventBridge Scheduler.
    case 'schedules:manage':
      return [
        { actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'], resources: [a.schedules] },
        {
          actions: ['iam:PassRole'],
          resources: [a.schedulerRole],
          conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
        },
      ];
    case 'async:on-failure':
      return [{ actions: ['sqs:SendMessage'], resources: [a.asyncFailures] }];
    case 'cursors:sign':
      return [{ actions: ['secretsmanager:GetSecretValue'], resources: [a.cursorSecret] }];
    case 'schedules:delete':
      return [{ actions: ['scheduler:DeleteSchedule'], resources: [a.schedules] }];
    case 'schedules:list':
      return [{ actions: ['scheduler:ListSchedules'], resources: ['*'] }];
    // The stream of this table only (CDK's grantStreamRead would add dynamodb:ListStreams on *);
    // a batch that fails its retries is described on the stream's DLQ.
    case 'stream:read':
      return [
        {
          actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
          resources: [a.tableStream],
        },
        { actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'], resources: [a.auditDlq] },
      ];
    case 'events:put':
      return [{ actions: ['events:PutEvents'], resources: [a.eventBus] }];
    default:
      return grant satisfies never;
  }
}

/** A function's whole policy (beyond writing its own log group, which the runtime does, not the code). */
export const statementsOf = (grants: readonly FunctionGrant[], arns: Arns): Statement[] =>
  grants.flatMap((g) => statementsOfGrant(g, arns));

/** Routes that take a cursor sign and check cursors, so they need the cursor key. */
export const pages = (route: Pick<Route, 'query'>) => route.query !== undefined && 'cursor' in route.query.shape;

/**
 * A route's grants: its own, the cursor key of a route that pages, the metering of an API-key
 * request, and the failure counter of every route that authenticates (a missing, invalid or expired
 * credential is counted per address).
 */
export const grantsOfRoute = (route: Pick<Route, 'grants' | 'auth' | 'query'>): FunctionGrant[] => [
  ...route.grants,
  ...(pages(route) ? (['cursors:sign'] as const) : []),
  ...(route.auth.kind === 'apiKey' || (route.auth.kind === 'session' && route.auth.keyScope) ? (['table:meter'] as const) : []),
  ...(route.auth.kind !== 'none' ? (['table:authfail'] as const) : []),
];

/** What AWS's integrations do with a worker's role, beyond the worker's own grants. */
const WORKER_EXTRAS: Record<Worker, readonly FunctionGrant[]> = {
  'worker/execute': ['queue:consume-runs'],
  'worker/notify': ['queue:consume-notify'],
  'sweep/scheduled': ['schedules:list', 'async:on-failure'],
  'sweep/startup': ['queue:backlog'],
  'schedule/fire': ['schedules:delete', 'async:on-failure'],
  'worker/audit-events': ['stream:read', 'events:put'],
  'code/apply': [],
};

/** A worker's, sweep's or the schedule fire's grants. */
export const grantsOfWorker = (w: Worker): FunctionGrant[] => [...WORKERS[w].grants, ...WORKER_EXTRAS[w]];
