import { Duration, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { grantsOfWorker } from '../iam.ts';
import type { FlowgateStackProps } from '../settings.ts';
import type { Functions } from './functions.ts';
import type { Bindable } from './route-function.ts';

/**
 * The records the audit-events worker is invoked for (Lambda's event filtering): new account audit
 * entries, items of type `audit` under `AUDIT#<account>` (an approval's own history records are of type
 * `audit` too, under the approval's run: not these).
 */
export const AUDIT_EVENTS_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: ['audit'] }, PK: { S: [{ prefix: 'AUDIT#' }] } } },
} as const;
/** Stream records a batch: PutEvents takes 10 entries a request. */
export const AUDIT_EVENTS_BATCH = 10;
/** Retries of a failing batch (each split by bisection counts), then its description goes to the DLQ. */
export const AUDIT_EVENTS_RETRIES = 10;

/**
 * Audit entries onto EventBridge (functions/worker/audit-events.ts): the table's stream (new images),
 * the worker, its event source mapping (INSERTs of audit items only, 10 a batch, bisected on error,
 * partial batch failures, bounded retries, then the batch's description on a DLQ). In a nested stack
 * of its own (`AuditEvents`): the stack keeps its resources for routes (docs/deploying.md "Room to grow");
 * only the nested stack and the alarms are in it.
 */
export function addAuditEvents(
  stack: Stack,
  { props, functions, resources }: { props: FlowgateStackProps; functions: Functions; resources: Bindable },
) {
  const table = resources.table as dynamodb.Table;
  const streamArn = table.tableStreamArn;
  if (!streamArn) throw new Error('The table has no stream: addStorage sets NEW_IMAGE');
  const nested = new NestedStack(stack, 'AuditEvents', { description: `Flowgate audit entries onto EventBridge (${props.stage})` });
  const worker = functions.create('worker/audit-events', { timeoutSeconds: 30 }, nested);
  const dlq = new sqs.Queue(nested, 'AuditEventsDlq', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(dlq).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: "This queue is the audit-events stream mapping's on-failure destination (a dead-letter queue itself); nothing consumes it",
  });
  // The stream of this table only, the account's default bus of the stack's region, the DLQ (infra/iam.ts).
  worker.bind(resources, grantsOfWorker('worker/audit-events'), { auditDlq: dlq.queueArn });
  worker.addEventSourceMapping('Stream', {
    eventSourceArn: streamArn,
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: AUDIT_EVENTS_BATCH,
    bisectBatchOnError: true,
    reportBatchItemFailures: true,
    retryAttempts: AUDIT_EVENTS_RETRIES,
    onFailure: new SqsDlq(dlq),
    filters: [lambda.FilterCriteria.filter(AUDIT_EVENTS_FILTER)],
  });
  functions.group('Audit events', worker);
  return { auditWorker: worker, auditDlq: dlq };
}
