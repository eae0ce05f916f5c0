import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { ASYNC_INVOKES } from '../../functions/async-invokes.ts';
import { ALARMS } from '../../infra/constructs/alarms.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { IDEMPOTENCY_TTL_SECONDS } from '../../shared/db/entities/idempotency.ts';
import { type Route, routeKey } from '../../shared/http/route.ts';
import { FIRE_DELIVERY_WINDOW_MS, RETRY_WINDOW_MS } from '../../shared/schedules/clock.ts';
import { allResources, routeFunctionId, templatesOf } from '../support/template.ts';

/**
 * The schedules on AWS as the template has them: EventBridge Scheduler's group, the role its schedules
 * run as, their target (the fire function) and DLQ, and least privilege for everything around them.
 */

type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
const STACK = 'flowgate-sch';
const built = templatesOf(new FlowgateStack(app, STACK, { stage: 'sch' }));
const resources = allResources(built);
const entries = Object.entries(resources);
const ofType = (type: string) => entries.filter(([, r]) => r.Type === type) as [string, Resource][];
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
const actions = (s: Statement) => list(s.Action);
const one = <T>(xs: T[]): T => {
  expect(xs).toHaveLength(1);
  return xs[0] as T;
};

/** The statements of the policies attached to a role (by its logical id). */
const statementsOfRole = (roleId: string) =>
  ofType('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
    .flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement));
const roleOf = (fnId: string) => (resources[fnId] as Resource).Properties.Role['Fn::GetAtt'][0] as string;
const fnByHandler = (handler: string) =>
  one(
    ofType('AWS::Lambda::Function').filter(([id]) =>
      id.startsWith(
        handler
          .split('/')
          .map((p) => p[0]?.toUpperCase() + p.slice(1))
          .join(''),
      ),
    ),
  )[0];

const fireId = fnByHandler('schedule/fire');
const [groupId, group] = one(ofType('AWS::Scheduler::ScheduleGroup'));
const [dlqId] = one(ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.QueueName === `${STACK}-scheduler-dlq`));
const [roleId, role] = one(
  ofType('AWS::IAM::Role').filter(([, r]) => JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes('scheduler.amazonaws.com')),
);
const groupArnPattern = (s: Statement) => JSON.stringify(s.Resource).includes(`:schedule/${STACK}-schedules/*`);
const managing = (routes as readonly Route[]).filter((r) => (r.grants as readonly string[]).includes('schedules:manage'));

describe('EventBridge Scheduler in the template', () => {
  it('has the schedule group the schedules are created in, named after the stack', () => {
    expect(group.Properties.Name).toBe(`${STACK}-schedules`);
    expect(groupId).toBeTruthy();
  });

  it('has a role only EventBridge Scheduler of this account assumes, which may invoke the fire function and dead-letter, nothing else', () => {
    const trust = one(role.Properties.AssumeRolePolicyDocument.Statement as any[]);
    expect(trust).toMatchObject({
      Action: 'sts:AssumeRole',
      Principal: { Service: 'scheduler.amazonaws.com' },
      Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
    });
    expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = statementsOfRole(roleId);
    expect(statements).toHaveLength(2);
    expect(statements).toContainEqual({ Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [fireId, 'Arn'] } });
    expect(statements).toContainEqual({ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [dlqId, 'Arn'] } });
  });

  it('gives the functions that create schedules the group, the role, the fire function as target and the DLQ', () => {
    for (const route of managing) {
      const fn = resources[routeFunctionId(built.template, built.functions, routeKey(route))] as Resource;
      const env = fn.Properties.Environment.Variables;
      expect(env.SCHEDULE_GROUP, route.handler).toBe(`${STACK}-schedules`);
      expect(env.SCHEDULER_ROLE_ARN, route.handler).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      expect(env.SCHEDULE_TARGET_ARN, route.handler).toEqual({ 'Fn::GetAtt': [fireId, 'Arn'] });
      expect(env.SCHEDULE_DLQ_ARN, route.handler).toEqual({ 'Fn::GetAtt': [dlqId, 'Arn'] });
    }
    expect([...new Set(managing.map((r) => r.handler))].sort()).toEqual(
      [
        // The console's forms that change things (its schedules' create, pause, resume, run and delete among them).
        'http/console/change',
        'http/schedules/create',
        'http/schedules/delete',
        'http/schedules/run',
        'http/schedules/update',
        'http/workflows/delete',
        // Workflows as code: a workflow pruned by key goes with its schedules, as a delete does.
        'http/workflows/delete-by-key',
      ].sort(),
    );
  });

  it('lets those routes create, update and delete schedules of the group only, and pass the scheduler role only, to the scheduler only', () => {
    for (const route of managing) {
      const statements = statementsOfRole(roleOf(routeFunctionId(built.template, built.functions, routeKey(route))));
      const scheduler = statements.filter((s) => actions(s).some((a) => a.startsWith('scheduler:')));
      expect(actions(one(scheduler)).sort(), route.handler).toEqual([
        'scheduler:CreateSchedule',
        'scheduler:DeleteSchedule',
        'scheduler:UpdateSchedule',
      ]);
      expect(groupArnPattern(one(scheduler)), route.handler).toBe(true);
      const pass = one(statements.filter((s) => actions(s).includes('iam:PassRole')));
      expect(pass).toEqual({
        Effect: 'Allow',
        Action: 'iam:PassRole',
        Resource: { 'Fn::GetAtt': [roleId, 'Arn'] },
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      });
    }
  });

  it('grants no other function anything of the scheduler but the fire function (delete) and the sweep (list, and repair)', () => {
    const others = ofType('AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => !managing.some((r) => routeFunctionId(built.template, built.functions, routeKey(r)) === id));
    for (const id of others) {
      const statements = statementsOfRole(roleOf(id)).filter((s) =>
        actions(s).some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole'),
      );
      if (id === fireId) {
        expect(one(statements).Action).toBe('scheduler:DeleteSchedule');
        expect(groupArnPattern(one(statements))).toBe(true);
        expect((resources[id] as Resource).Properties.Environment.Variables.SCHEDULE_GROUP).toBe(`${STACK}-schedules`);
      } else if (id.startsWith('SweepScheduled')) {
        expect(statements.flatMap(actions).sort()).toEqual(
          [
            'iam:PassRole',
            'scheduler:CreateSchedule',
            'scheduler:DeleteSchedule',
            'scheduler:ListSchedules',
            'scheduler:UpdateSchedule',
          ].sort(),
        );
      } else expect(statements, id).toEqual([]);
    }
  });

  it('keeps the DLQ TLS-only and encrypted, and alarms on it and on the fire function errors', () => {
    const dlq = resources[dlqId] as Resource;
    expect(dlq.Properties.SqsManagedSseEnabled).toBe(true);
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const dlqAlarm = one(alarms.filter((a) => a.AlarmName === `${STACK}-${ALARMS.schedulerDlq}`));
    expect(JSON.stringify(dlqAlarm.Dimensions)).toContain(dlqId);
    const fireAlarm = one(alarms.filter((a) => a.AlarmName === `${STACK}-${ALARMS.scheduleFireErrors}`));
    expect(fireAlarm).toMatchObject({ MetricName: 'Errors', Namespace: 'AWS/Lambda' });
    expect(JSON.stringify(fireAlarm.Dimensions)).toContain(fireId);
  });
});

describe("Lambda's asynchronous invocations: schedule fires and scheduled sweeps", () => {
  const sweepId = fnByHandler('sweep/scheduled');
  const [queueId, queue] = one(ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.QueueName === `${STACK}-async-failures`));
  const queueArn = { 'Fn::GetAtt': [queueId, 'Arn'] };
  const configs = ofType('AWS::Lambda::EventInvokeConfig');
  const configOf = (fnId: string) => one(configs.filter(([, c]) => c.Properties.FunctionName.Ref === fnId))[1].Properties;

  it('retries an error twice, keeps a fire an hour and a sweep tick 10 minutes, then sends it to the on-failure queue', () => {
    expect(configs).toHaveLength(2);
    expect(configOf(fireId)).toEqual({
      FunctionName: { Ref: fireId },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 3600,
      DestinationConfig: { OnFailure: { Destination: queueArn } },
    });
    expect(configOf(sweepId)).toEqual({
      FunctionName: { Ref: sweepId },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 600,
      DestinationConfig: { OnFailure: { Destination: queueArn } },
    });
    // The audit-events worker's stream mapping has a destination of its own; no other function is invoked asynchronously.
    for (const nested of [...built.nested, built.auditEvents])
      expect(Object.keys(nested.findResources('AWS::Lambda::EventInvokeConfig'))).toEqual([]);
  });

  it("keeps a late retry of a fire within the 24 hours its idempotency key is kept, and drift repair waits out the fire's whole window", () => {
    expect(ASYNC_INVOKES['schedule/fire'].maxEventAgeSeconds).toBeLessThan(IDEMPOTENCY_TTL_SECONDS);
    expect(FIRE_DELIVERY_WINDOW_MS).toBe(RETRY_WINDOW_MS + ASYNC_INVOKES['schedule/fire'].maxEventAgeSeconds * 1000);
  });

  it('keeps the on-failure queue encrypted, TLS-only, 14 days, and lets only those two functions send to it, nothing else of SQS', () => {
    expect(queue.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    const policy = one(ofType('AWS::SQS::QueuePolicy').filter(([, p]) => JSON.stringify(p.Properties.Queues).includes(queueId)))[1];
    expect(policy.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    for (const [id] of ofType('AWS::Lambda::Function')) {
      // Each (action, resource) the role allows on the queue: SendMessage alone (its `async:on-failure` grant, infra/iam.ts).
      const naming = statementsOfRole(roleOf(id))
        .filter((s) => JSON.stringify(s.Resource).includes(queueId))
        .flatMap((s) =>
          [s.Action].flat().flatMap((action) =>
            [s.Resource]
              .flat()
              .filter((r) => JSON.stringify(r).includes(queueId))
              .map((r) => ({ action, r, s })),
          ),
        );
      if (id === fireId || id === sweepId) {
        expect(
          naming.map(({ action, r }) => ({ action, r })),
          id,
        ).toEqual([{ action: 'sqs:SendMessage', r: queueArn }]);
        expect(naming[0]!.s.Effect).toBe('Allow');
        expect(naming[0]!.s.Condition).toBeUndefined();
      } else expect(naming, id).toEqual([]);
    }
    // The permission is in place before the config that needs it is created (CloudFormation checks it then).
    for (const id of [fireId, sweepId]) {
      const policyId = one(
        ofType('AWS::IAM::Policy').filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleOf(id))),
      )[0];
      expect((resources[id] as Resource & { DependsOn?: string[] }).DependsOn).toContain(policyId);
    }
  });

  it('alarms on the on-failure queue, and on AsyncEventsDropped of each of the two functions', () => {
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const queueAlarm = one(alarms.filter((a) => a.AlarmName === `${STACK}-${ALARMS.asyncFailures}`));
    expect(queueAlarm).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
    expect(JSON.stringify(queueAlarm.Dimensions)).toContain(queueId);
    for (const [key, fnId] of [
      ['fireEventsDropped', fireId],
      ['sweepEventsDropped', sweepId],
    ] as const) {
      const a = one(alarms.filter((x) => x.AlarmName === `${STACK}-${ALARMS[key]}`));
      expect(a).toMatchObject({
        MetricName: 'AsyncEventsDropped',
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId } }],
      });
    }
    // The texts say what AWS does: Lambda retries a function error, the scheduler's DLQ sees only invoke failures.
    const fireErrors = one(alarms.filter((a) => a.AlarmName === `${STACK}-${ALARMS.scheduleFireErrors}`));
    expect(fireErrors.AlarmDescription).toMatch(/retries each failed fire twice .* then sends it to the async-failures queue/);
    expect(fireErrors.AlarmDescription).not.toMatch(/retries them for an hour/);
    const schedulerDlq = one(alarms.filter((a) => a.AlarmName === `${STACK}-${ALARMS.schedulerDlq}`));
    expect(schedulerDlq.AlarmDescription).toMatch(/could not invoke the schedule-fire function/);
  });
});
