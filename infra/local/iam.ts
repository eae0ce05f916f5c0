import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pluggable } from '@smithy/types';
import { type FunctionGrant, type Statement, statementsOf, type Arns } from '../iam.ts';
import { AUDIT_EVENTS_DLQ, HEAVY_RUNS_QUEUE, TABLE } from '../../shared/db/table.ts';
import { REGION } from './provision.ts';

/**
 * IAM, enforced locally: every AWS SDK call a function makes while it handles an invocation is
 * checked against that function's statements (infra/iam.ts, the same data the CDK stack turns into
 * its role's policy), as AWS would: action, resource (table, index, queue, bucket object, identity)
 * and the `dynamodb:LeadingKeys` condition. A call no statement allows fails with the error AWS
 * throws (`AccessDeniedException`; S3 `AccessDenied`, 403). Calls made outside any invocation (the
 * operator's CLI, a test's own setup) are not a function's and are not checked.
 *
 * An invocation that Lambda would have stopped (its timeout passed, or it crashed) makes no further
 * call: each is refused as `ended`, so an abandoned handler changes nothing more, as on AWS.
 */

/** The local account id in ARNs (DynamoDB Local and the emulators ignore it). */
export const LOCAL_ACCOUNT = '000000000000';

/** One function handling one invocation: who makes the SDK calls in its async context. */
export type Invocation = {
  /** The function's name (`http-auth-me`, `worker-execute`, …). */
  fn: string;
  statements: readonly Statement[];
  /** Set when Lambda would have stopped the invocation (timeout, crash): every later call fails. */
  ended?: 'timeout' | 'crash';
};

const current = new AsyncLocalStorage<Invocation>();

/** Run `work` as `invocation`: the SDK calls it makes (and those of whatever it starts) are that function's. */
export const runAs = <T>(invocation: Invocation, work: () => T): T => current.run(invocation, work);
/** Run `work` as no function's (a test's own stand-in for another process, the operator). */
export const outsideInvocations = <T>(work: () => T): T => current.exit(work);
/**
 * The keeper of deferred work (shared/sdk-plugins.ts): it runs as the invocation that asked for it, or
 * as none. Work of an invocation Lambda has since stopped runs as none: on AWS it would have been done
 * before the stop or lost with the instance; locally it is done (it is never refused for ever).
 */
export const keepInvocation = () => {
  const invocation = current.getStore();
  return <R>(work: () => R): R => (invocation && !invocation.ended ? current.run(invocation, work) : current.exit(work));
};
/** The invocation whose async context this is, if any. */
export const currentInvocation = () => current.getStore();

const last = (url: string) => url.split('/').pop() ?? url;

/** The emulators' resources as ARNs, from the environment the local stack set. */
export function localArns(env: NodeJS.ProcessEnv = process.env): Arns {
  const account = `${REGION}:${LOCAL_ACCOUNT}`;
  const table = `arn:aws:dynamodb:${account}:table/${env.TABLE_NAME ?? 'flowgate'}`;
  return {
    table,
    // DynamoDB Local labels a stream with its creation time, as DynamoDB does: any stream of this table.
    tableStream: `${table}/stream/*`,
    queue: `arn:aws:sqs:${account}:${last(env.RUNS_QUEUE_URL ?? 'runs')}`,
    heavyQueue: `arn:aws:sqs:${account}:${last(env.HEAVY_RUNS_QUEUE_URL ?? HEAVY_RUNS_QUEUE.name)}`,
    notifyQueue: `arn:aws:sqs:${account}:${last(env.NOTIFY_QUEUE_URL ?? 'notifications')}`,
    auditDlq: `arn:aws:sqs:${account}:${last(env.AUDIT_EVENTS_DLQ_URL ?? AUDIT_EVENTS_DLQ.name)}`,
    asyncFailures: `arn:aws:sqs:${account}:${last(env.ASYNC_FAILURES_QUEUE_URL ?? 'async-failures')}`,
    bucket: `arn:aws:s3:::${env.ARTIFACTS_BUCKET ?? 'artifacts'}`,
    secretsKey: `arn:aws:kms:${account}:key/local`,
    reviewLinkSecret: `arn:aws:secretsmanager:${account}:secret:review-links`,
    cursorSecret: `arn:aws:secretsmanager:${account}:secret:cursors`,
    // The SES emulator sends from any address: every identity counts as verified locally.
    sesIdentity: `arn:aws:ses:${account}:identity/*`,
    schedules: `arn:aws:scheduler:${account}:schedule/local/*`,
    schedulerRole: `arn:aws:iam::${LOCAL_ACCOUNT}:role/local-scheduler`,
    eventBus: `arn:aws:events:${account}:event-bus/default`,
  };
}

/** A function's invocation identity: its statements over the local ARNs. */
export const identityOf = (fn: string, grants: readonly FunctionGrant[]): Invocation => ({
  fn,
  statements: statementsOf(grants, localArns()),
});

/** One authorization request: an action on a resource, with the condition keys the call carries. */
export type Check = { action: string; resource: string; leadingKeys?: string[] };

type Attr = unknown;
/** A key attribute's string value, marshalled (`{ S: … }`) or not. */
const str = (v: Attr): string | undefined =>
  typeof v === 'string'
    ? v
    : v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string'
      ? (v as { S: string }).S
      : undefined;
const pkOf = (key: Record<string, Attr> | undefined) => {
  const pk = str(key?.[TABLE.partitionKey]);
  return pk === undefined ? [] : [pk];
};

/** The partition key value a Query's key condition names (`PK = :pk`, `#pk = :v`), on the table only. */
function queryLeadingKeys(input: Record<string, any>): string[] {
  if (input.IndexName) return [];
  const names: Record<string, string> = input.ExpressionAttributeNames ?? {};
  const values: Record<string, Attr> = input.ExpressionAttributeValues ?? {};
  for (const m of String(input.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const attr = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (attr === TABLE.partitionKey) {
      const v = str(values[m[2]!]);
      if (v !== undefined) return [v];
    }
  }
  return [];
}

const tableArn = (name: string) => `arn:aws:dynamodb:${REGION}:${LOCAL_ACCOUNT}:table/${name}`;

/** The authorization requests of one DynamoDB call (a transaction: one per item, as its own action). */
function dynamoChecks(command: string, input: Record<string, any>): Check[] {
  const op = command.replace(/Command$/, '');
  switch (op) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [{ action: `dynamodb:${op}`, resource: tableArn(input.TableName), leadingKeys: pkOf(input.Key) }];
    case 'PutItem':
      return [{ action: 'dynamodb:PutItem', resource: tableArn(input.TableName), leadingKeys: pkOf(input.Item) }];
    case 'Query':
    case 'Scan': {
      const table = tableArn(input.TableName);
      const resource = input.IndexName ? `${table}/index/${input.IndexName}` : table;
      return [{ action: `dynamodb:${op}`, resource, leadingKeys: op === 'Query' ? queryLeadingKeys(input) : [] }];
    }
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.entries(input.RequestItems ?? {}).map(([name, items]: [string, any]) => ({
        action: `dynamodb:${op}`,
        resource: tableArn(name),
        leadingKeys: (op === 'BatchGetItem' ? items.Keys : items).flatMap((k: any) =>
          pkOf(op === 'BatchGetItem' ? k : (k.PutRequest?.Item ?? k.DeleteRequest?.Key)),
        ),
      }));
    case 'TransactWriteItems':
      return (input.TransactItems ?? []).map((t: any) => {
        const [kind, item] = Object.entries(t)[0] as [string, any];
        const action = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' }[kind];
        return { action: `dynamodb:${action}`, resource: tableArn(item.TableName), leadingKeys: pkOf(item.Key ?? item.Item) };
      });
    case 'TransactGetItems':
      return (input.TransactItems ?? []).map((t: any) => ({
        action: 'dynamodb:GetItem',
        resource: tableArn(t.Get.TableName),
        leadingKeys: pkOf(t.Get.Key),
      }));
    default:
      return [{ action: `dynamodb:${op}`, resource: input.TableName ? tableArn(input.TableName) : '*' }];
  }
}

/** The authorization requests of one call of `client` (its SDK client name) with `input`. */
export function checksOf(client: string, command: string, input: Record<string, any>): Check[] {
  const op = command.replace(/Command$/, '');
  switch (client) {
    case 'DynamoDBClient':
      return dynamoChecks(command, input);
    case 'SQSClient': {
      const name = last(String(input.QueueUrl ?? input.QueueName ?? ''));
      const action = op === 'SendMessageBatch' ? 'SendMessage' : op === 'DeleteMessageBatch' ? 'DeleteMessage' : op;
      return [{ action: `sqs:${action}`, resource: `arn:aws:sqs:${REGION}:${LOCAL_ACCOUNT}:${name}` }];
    }
    case 'S3Client':
      return [{ action: `s3:${op}`, resource: `arn:aws:s3:::${input.Bucket}${input.Key === undefined ? '' : `/${input.Key}`}` }];
    // A stream's calls name it by ARN (GetRecords by its iterator, which begins with the stream's ARN).
    case 'DynamoDBStreamsClient': {
      const arn = String(input.StreamArn ?? String(input.ShardIterator ?? '').split('|')[0]);
      const stream = /:table\/([^/]+)\/stream\/(.+)$/.exec(arn);
      return [{ action: `dynamodb:${op}`, resource: stream ? `${tableArn(stream[1] as string)}/stream/${stream[2]}` : '*' }];
    }
    // PutEvents is authorized on each entry's bus (no name: the default bus).
    case 'EventBridgeClient': {
      const bus = (name: unknown) =>
        typeof name === 'string' && name.startsWith('arn:')
          ? name
          : `arn:aws:events:${REGION}:${LOCAL_ACCOUNT}:event-bus/${typeof name === 'string' && name !== '' ? name : 'default'}`;
      const entries: { EventBusName?: string }[] = op === 'PutEvents' ? (input.Entries ?? []) : [{}];
      return [...new Set(entries.map((e) => bus(e.EventBusName)))].map((resource) => ({ action: `events:${op}`, resource }));
    }
    case 'SESv2Client': {
      const from = String(input.FromEmailAddress ?? '');
      const domain = from.replace(/^.*</, '').replace(/>.*$/, '').split('@').pop();
      return [{ action: `ses:${op}`, resource: `arn:aws:ses:${REGION}:${LOCAL_ACCOUNT}:identity/${domain}` }];
    }
    default:
      return [{ action: `${client.replace(/Client$/, '').toLowerCase()}:${op}`, resource: '*' }];
  }
}

/** IAM's StringLike: `*` any run of characters, `?` one character. */
const like = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  ).test(value);
const asList = (v: readonly string[] | string) => (typeof v === 'string' ? [v] : v);

/** Whether a statement's conditions hold for `check` (the condition keys the local stack knows; any other fails closed). */
function conditionsHold(s: Statement, check: Check): boolean {
  for (const [operator, keys] of Object.entries(s.conditions ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      if (operator === 'ForAllValues:StringLike' && key === 'dynamodb:LeadingKeys') {
        if (!(check.leadingKeys ?? []).every((k) => asList(expected).some((p) => like(p, k)))) return false;
      } else {
        return false;
      }
    }
  }
  return true;
}

/** Whether `statements` allow `check` (an explicit allow; there are no denies in the functions' policies). */
export const allows = (statements: readonly Statement[], check: Check) =>
  statements.some(
    (s) => s.actions.some((a) => like(a, check.action)) && s.resources.some((r) => like(r, check.resource)) && conditionsHold(s, check),
  );

/** The error AWS answers a call its policy does not allow (the service's own name and status for it). */
export function accessDenied(client: string, invocation: Invocation, check: Check): Error {
  const who = `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${invocation.fn}-role/${invocation.fn}`;
  const s3 = client === 'S3Client';
  const error = Object.assign(
    new Error(
      `User: ${who} is not authorized to perform: ${check.action} on resource: ${check.resource} because no identity-based policy allows the ${check.action} action`,
    ),
    {
      name: s3 ? 'AccessDenied' : 'AccessDeniedException',
      $fault: 'client',
      $metadata: { httpStatusCode: s3 ? 403 : 400, attempts: 1, totalRetryDelay: 0 },
    },
  );
  return error;
}

/** The error of a call made by an invocation Lambda would have stopped. */
export function invocationEnded(invocation: Invocation): Error {
  return Object.assign(
    new Error(`${invocation.fn}: the invocation has ended (${invocation.ended}); Lambda would not have made this call`),
    {
      name: 'InvocationEnded',
    },
  );
}

/**
 * The SDK plugin that enforces it: before a command is sent, each of its authorization requests must be
 * allowed by the calling invocation's statements.
 */
export const iamPlugin: Pluggable<any, any> = {
  applyToStack: (stack) => {
    stack.add(
      (next, context) => async (args) => {
        const invocation = current.getStore();
        if (invocation) {
          if (invocation.ended) throw invocationEnded(invocation);
          const client = String(context.clientName ?? '');
          for (const check of checksOf(client, String(context.commandName ?? ''), args.input as Record<string, any>)) {
            if (!allows(invocation.statements, check)) throw accessDenied(client, invocation, check);
          }
        }
        return next(args);
      },
      { step: 'initialize', name: 'localIam', priority: 'low', override: true },
    );
  },
};
