import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { ALARMS } from '../../infra/constructs/alarms.ts';
import { AUDIT_EVENTS_FILTER } from '../../infra/constructs/audit-events.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { ownFunctions, parameterValue, templatesOf } from '../support/template.ts';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
const { template, auditEvents } = templatesOf(new FlowgateStack(app, 'flowgate-audit', { stage: 'audit' }));

const resources = (t: typeof template) => Object.entries(t.toJSON().Resources as Record<string, Resource>);
const ofType = (t: typeof template, type: string) => resources(t).filter(([, r]) => r.Type === type);
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
/** What the stack passes for one of the nested stack's parameters (`{ Ref: <parameter> }`). */
const resolved = (v: unknown) => {
  const ref = (v as { Ref?: string }).Ref;
  return ref && ref in (auditEvents.toJSON().Parameters ?? {}) ? parameterValue(template, ref) : v;
};

const [tableId, table] = ofType(template, 'AWS::DynamoDB::Table')[0]!;
const [[workerId, worker] = []] = ownFunctions(auditEvents);
const [[, mapping] = []] = ofType(auditEvents, 'AWS::Lambda::EventSourceMapping');
const [[dlqId] = []] = ofType(auditEvents, 'AWS::SQS::Queue');
const statements = ofType(auditEvents, 'AWS::IAM::Policy')
  .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === worker?.Properties.Role['Fn::GetAtt'][0]))
  .flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement));

/** Lambda's event filtering as far as the pattern uses it: exact values, nested objects. */
function matches(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern))
    return pattern.some((p) =>
      p !== null && typeof p === 'object' && 'prefix' in p
        ? typeof value === 'string' && value.startsWith(p.prefix as string)
        : p === value,
    );
  if (pattern && typeof pattern === 'object')
    return Object.entries(pattern).every(
      ([k, p]) => value !== null && typeof value === 'object' && matches(p, (value as Record<string, unknown>)[k]),
    );
  return false;
}

describe('audit entries onto EventBridge, in the stack', () => {
  it('gives the table a stream of new images (an in-place update of a deployed table)', () => {
    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
    // The table keeps its logical id: adding a stream replaces nothing.
    expect(tableId).toMatch(/^Table/);
  });

  it('runs the worker in a nested stack of its own: the stack keeps one resource for it and the alarms', () => {
    expect(ownFunctions(auditEvents)).toHaveLength(1);
    expect(ofType(template, 'AWS::CloudFormation::Stack').filter(([id]) => id.startsWith('AuditEvents'))).toHaveLength(1);
    // The stack's own: the runs queue's two lanes and the notifications queue.
    expect(ofType(template, 'AWS::Lambda::EventSourceMapping')).toHaveLength(3);
    const roleId = worker?.Properties.Role['Fn::GetAtt'][0];
    expect(auditEvents.toJSON().Resources[roleId].Properties.Description).toBe('Flowgate function worker/audit-events');
  });

  it('maps the stream to it for INSERTs of audit items only, 10 a batch, bisected on error, partial failures, bounded retries, a DLQ', () => {
    const p = mapping?.Properties ?? {};
    expect(resolved(p.EventSourceArn)).toEqual({ 'Fn::GetAtt': [tableId, 'StreamArn'] });
    expect(p.FunctionName).toEqual({ Ref: workerId });
    expect(p.FilterCriteria).toEqual({
      Filters: [{ Pattern: '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"type":{"S":["audit"]},"PK":{"S":[{"prefix":"AUDIT#"}]}}}}' }],
    });
    expect(p).toMatchObject({
      BatchSize: 10,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: 10,
      StartingPosition: 'TRIM_HORIZON',
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } } },
    });
  });

  it('has a filter that lets an audit INSERT through and nothing else', () => {
    const image = (type: string, pk = 'AUDIT#acc_1#3') => ({
      PK: { S: pk },
      SK: { S: '2026-11-28T00:00:00.000Z#ae_1' },
      type: { S: type },
    });
    const record = (eventName: string, type: string, pk?: string) => ({ eventName, dynamodb: { NewImage: image(type, pk) } });
    const pattern = JSON.parse(mapping?.Properties.FilterCriteria.Filters[0].Pattern);
    expect(pattern).toEqual(AUDIT_EVENTS_FILTER);
    expect(matches(pattern, record('INSERT', 'audit'))).toBe(true);
    expect(matches(pattern, record('MODIFY', 'audit'))).toBe(false);
    expect(matches(pattern, record('REMOVE', 'audit'))).toBe(false);
    expect(matches(pattern, record('INSERT', 'execution'))).toBe(false);
    // An approval's own history record is of type audit too, under its run's partition.
    expect(matches(pattern, record('INSERT', 'audit', 'ACC#acc_1#AP#ap_1'))).toBe(false);
    expect(matches(pattern, { eventName: 'INSERT', dynamodb: {} })).toBe(false);
  });

  it("lets the worker read that stream, put events on the region's default bus and describe failed batches on its DLQ: nothing else", () => {
    const byAction = new Map<string, unknown[]>();
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      expect(s.Condition).toBeUndefined();
      for (const a of list(s.Action)) byAction.set(a, [...(byAction.get(a) ?? []), ...list(s.Resource).map(resolved)]);
    }
    const stream = [{ 'Fn::GetAtt': [tableId, 'StreamArn'] }];
    expect(Object.fromEntries(byAction)).toEqual({
      'logs:CreateLogStream': [expect.anything()],
      'logs:PutLogEvents': [expect.anything()],
      'dynamodb:DescribeStream': stream,
      'dynamodb:GetRecords': stream,
      'dynamodb:GetShardIterator': stream,
      'dynamodb:ListStreams': stream,
      'events:PutEvents': [
        {
          'Fn::Join': [
            '',
            ['arn:', { Ref: 'AWS::Partition' }, ':events:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':event-bus/default'],
          ],
        },
      ],
      'sqs:GetQueueAttributes': [{ 'Fn::GetAtt': [dlqId, 'Arn'] }],
      'sqs:GetQueueUrl': [{ 'Fn::GetAtt': [dlqId, 'Arn'] }],
      'sqs:SendMessage': [{ 'Fn::GetAtt': [dlqId, 'Arn'] }],
    });
  });

  it('alarms on the worker’s errors, its iterator age and its DLQ, in the stack with the other alarms', () => {
    const alarm = (key: keyof typeof ALARMS) =>
      ofType(template, 'AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.AlarmName === `flowgate-audit-${ALARMS[key]}`)?.[1];
    const outputOf = (dimension: { Value: { 'Fn::GetAtt': [string, string] } }) => {
      const name = dimension.Value['Fn::GetAtt'][1].replace(/^Outputs\./, '');
      return auditEvents.toJSON().Outputs[name].Value;
    };
    const errors = alarm('auditEventsErrors')?.Properties;
    expect(errors).toMatchObject({
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Threshold: 0,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
    });
    expect(outputOf(errors?.Dimensions[0])).toEqual({ Ref: workerId });
    const age = alarm('auditEventsAge')?.Properties;
    expect(age).toMatchObject({ MetricName: 'IteratorAge', Namespace: 'AWS/Lambda', Statistic: 'Maximum', Threshold: 900_000 });
    expect(outputOf(age?.Dimensions[0])).toEqual({ Ref: workerId });
    const dlq = alarm('auditEventsDlq')?.Properties;
    expect(dlq).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Threshold: 0 });
    expect(outputOf(dlq?.Dimensions[0])).toEqual({ 'Fn::GetAtt': [dlqId, 'QueueName'] });
  });
});
