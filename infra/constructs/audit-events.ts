import { Duration, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AUDIT_EVENTS_MAPPING, AUDIT_EVENTS_TIMEOUT_SECONDS } from '../../functions/audit-stream.ts';
import { AUDIT_EVENTS_DLQ } from '../../shared/db/table.ts';
import { grantsOfWorker } from '../iam.ts';
import type { FlowgateStackProps } from '../settings.ts';
import type { Functions } from './functions.ts';
import type { Bindable } from './route-function.ts';

/** Its mapping's settings (functions/audit-stream.ts: the local stack's stream poller applies the same). */
export const AUDIT_EVENTS_FILTER = AUDIT_EVENTS_MAPPING.filter;
export const AUDIT_EVENTS_BATCH = AUDIT_EVENTS_MAPPING.batchSize;
export const AUDIT_EVENTS_RETRIES = AUDIT_EVENTS_MAPPING.maximumRetryAttempts;

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
  const worker = functions.create('worker/audit-events', { timeoutSeconds: AUDIT_EVENTS_TIMEOUT_SECONDS }, nested);
  const dlq = new sqs.Queue(nested, 'AuditEventsDlq', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(AUDIT_EVENTS_DLQ.retentionDays),
  });
  Validations.of(dlq).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: "This queue is the audit-events stream mapping's on-failure destination (a dead-letter queue itself); nothing consumes it",
  });
  // The stream of this table only, the account's default bus of the stack's region, the DLQ (infra/iam.ts).
  worker.bind(resources, grantsOfWorker('worker/audit-events'), { auditDlq: dlq.queueArn });
  worker.addEventSourceMapping('Stream', {
    eventSourceArn: streamArn,
    startingPosition: lambda.StartingPosition[AUDIT_EVENTS_MAPPING.startingPosition],
    batchSize: AUDIT_EVENTS_MAPPING.batchSize,
    bisectBatchOnError: AUDIT_EVENTS_MAPPING.bisectBatchOnFunctionError,
    reportBatchItemFailures: AUDIT_EVENTS_MAPPING.reportBatchItemFailures,
    retryAttempts: AUDIT_EVENTS_MAPPING.maximumRetryAttempts,
    onFailure: new SqsDlq(dlq),
    filters: [lambda.FilterCriteria.filter(AUDIT_EVENTS_MAPPING.filter)],
  });
  functions.group('Audit events', worker);
  return { auditWorker: worker, auditDlq: dlq };
}
