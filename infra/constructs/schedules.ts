import { Aws, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { grantsOfWorker } from '../iam.ts';
import { configureAsyncInvoke } from './async-invokes.ts';
import type { Functions } from './functions.ts';
import type { Bindable, RouteFunction, SchedulerBinding } from './route-function.ts';

/**
 * EventBridge Scheduler for the schedules (docs/schedules.md): the group every schedule is created in
 * at run time (shared/schedules/clock.ts), the role the schedules run as (it may invoke the fire
 * function and dead-letter to the DLQ, nothing else), and the DLQ of fires the scheduler could not
 * invoke the function with for an hour. The scheduler invokes asynchronously: a fire the function
 * fails is Lambda's async queue's (two retries, then the on-failure queue: `addSchedules`).
 */
export class Schedules extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly role: iam.Role;
  readonly dlq: sqs.Queue;
  /** The ARN pattern of the group's schedules, which the schedule routes may create, update and delete. */
  readonly scheduleArns: string;

  constructor(scope: Construct, id: string, props: { fire: IFunction; removalPolicy: RemovalPolicy }) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    this.group = new scheduler.ScheduleGroup(this, 'Group', {
      scheduleGroupName: `${stackName}-schedules`,
      removalPolicy: props.removalPolicy,
    });
    this.dlq = new sqs.Queue(this, 'Dlq', {
      queueName: `${stackName}-scheduler-dlq`,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.dlq).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This is the dead-letter queue of the schedules' fires the scheduler could not invoke (EventBridge Scheduler's DeadLetterConfig); nothing consumes it",
    });
    this.role = new iam.Role(this, 'Role', {
      description: 'EventBridge Scheduler: invokes the schedule-fire function for the schedules of its group',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
      }),
    });
    // The function itself only (`grantInvoke` would add its versions, `:*`).
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.fire.functionArn] }));
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.dlq.queueArn] }));
    this.scheduleArns = `arn:${Aws.PARTITION}:scheduler:${Aws.REGION}:${Aws.ACCOUNT_ID}:schedule/${this.group.scheduleGroupName}/*`;
    // The one wildcard: schedules are created at run time, named by schedule id, in this group only.
    Validations.of(Stack.of(this)).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${stackName}-schedules/*]`,
      reason:
        "Schedules are made at run time, one per schedule id, in the stack's own group; only Create/Update/DeleteSchedule on that group",
    });
  }

  /** What the functions that manage schedules are bound to (`schedules:manage`). */
  binding(fire: IFunction): SchedulerBinding {
    return {
      groupName: this.group.scheduleGroupName,
      scheduleArns: this.scheduleArns,
      roleArn: this.role.roleArn,
      targetArn: fire.functionArn,
      dlqArn: this.dlq.queueArn,
    };
  }
}

/**
 * The schedules' fire function (EventBridge Scheduler's target, in the stack itself, invoked
 * asynchronously: two retries of an error, then `asyncFailures`) and the scheduler's group, role and
 * DLQ; returns the resources every function is bound to, the scheduler's among them (the fire
 * function's ARN is part of them, so it is made first).
 */
export function addSchedules(
  stack: Stack,
  {
    functions,
    removalPolicy,
    resources,
    asyncFailures,
  }: { functions: Functions; removalPolicy: RemovalPolicy; resources: Omit<Bindable, 'scheduler'>; asyncFailures: sqs.IQueue },
): { fire: RouteFunction; schedules: Schedules; resources: Bindable } {
  const fire = functions.create('schedule/fire', { timeoutSeconds: 30 });
  configureAsyncInvoke(fire, 'schedule/fire', asyncFailures);
  const schedules = new Schedules(stack, 'Schedules', { fire, removalPolicy });
  const bindable: Bindable = { ...resources, scheduler: schedules.binding(fire) };
  fire.bind(bindable, grantsOfWorker('schedule/fire'), { asyncFailures: asyncFailures.queueArn });
  // Only deletes (gone schedules, a fired at(): `schedules:delete`): `schedules:manage` would give it its own ARN, a cycle.
  fire.addEnvironment('SCHEDULE_GROUP', schedules.group.scheduleGroupName);
  functions.group('Schedules', fire);
  return { fire, schedules, resources: bindable };
}
