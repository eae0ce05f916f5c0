import { type Stack, Validations } from 'aws-cdk-lib';
import type * as cw from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { AlarmKey } from './alarms.ts';
import type { RouteFunction } from './route-function.ts';

/**
 * The functions a release reaches through a canary: the webhook trigger (both of its routes) and the
 * two queue workers, the hot path of every run. The other functions are updated in place.
 */
export const CANARY_HANDLERS = ['http/webhooks/trigger', 'http/webhooks/trigger-legacy', 'worker/execute', 'worker/notify'] as const;
export type CanaryHandler = (typeof CANARY_HANDLERS)[number];
export const isCanaried = (handler: string): handler is CanaryHandler => (CANARY_HANDLERS as readonly string[]).includes(handler);

/**
 * The alarms that roll a canary back: the API's 5xx (at any volume) for the trigger, each worker's
 * failed invocations for it. Not the queues' age nor the DLQs: they can be in alarm before a release
 * for reasons the release does not cause (a backlog, a message waiting for a redrive), and would then
 * refuse every release, the fix included.
 */
export const ROLLBACK_ALARMS: Record<CanaryHandler, readonly AlarmKey[]> = {
  'http/webhooks/trigger': ['api5xxRate', 'api5xxLowVolume'],
  'http/webhooks/trigger-legacy': ['api5xxRate', 'api5xxLowVolume'],
  'worker/execute': ['runsWorkerErrors'],
  'worker/notify': ['notifyWorkerErrors'],
};

/** The alias API Gateway and the event sources invoke; a release moves it from one version to the next. */
export const LIVE_ALIAS = 'live';
/** 10 % of the invocations go to the new version for 5 minutes, then all of them; an alarm in between rolls it back. */
export const CANARY = codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

/** What a canary adds beside its function: the version, the alias, the deployment group, its role and the role's policy. */
export const RESOURCES_PER_CANARY = 5;

/** A canaried function: its `live` alias and the CodeDeploy deployment group that shifts it. */
export type Canary = { fn: RouteFunction; alias: lambda.Alias; group: codedeploy.LambdaDeploymentGroup };

/**
 * Safe releases (docs/deploying.md "Releases: canaries and rollback"): each canaried function gets a
 * version per release and its `live` alias; CloudFormation hands the alias's move to CodeDeploy
 * (the alias's UpdatePolicy), which shifts 10 % for 5 minutes and rolls back on a failed deployment or
 * any of the group's alarms. One CodeDeploy application for the stack; each group beside its function
 * (the alias's update policy names it), with its own service role.
 */
export class Releases {
  readonly application: codedeploy.LambdaApplication;
  readonly canaries = new Map<CanaryHandler, Canary>();

  /** With `rollbackAlarms: false`, the canaries still run but no alarm stops them (a fix deployed while they fire). */
  private readonly ignoreAlarms: boolean;

  constructor(stack: Stack, opts: { rollbackAlarms?: boolean } = {}) {
    this.ignoreAlarms = opts.rollbackAlarms === false;
    this.application = new codedeploy.LambdaApplication(stack, 'Releases', { applicationName: `${stack.stackName}-releases` });
  }

  /** `fn`'s `live` alias on its current version, moved by a canary: what its callers must invoke. */
  canary(fn: RouteFunction): lambda.Alias {
    const handler = fn.handler;
    if (!isCanaried(handler)) throw new Error(`${handler} is not released through a canary (CANARY_HANDLERS)`);
    if (this.canaries.has(handler)) throw new Error(`${handler} has its canary already`);
    const alias = new lambda.Alias(fn, 'LiveAlias', { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    // CodeDeploy's role: move this alias and read the group's alarms, nothing else (CDK's default is the
    // AWS managed AWSCodeDeployRoleForLambdaLimited, which may update every alias of the account). Given
    // to the group as an immutable reference, so CDK adds no managed policy to it.
    const role = new iam.Role(fn, 'CanaryRole', {
      assumedBy: new iam.ServicePrincipal('codedeploy.amazonaws.com'),
      description: `Flowgate canary of ${handler}`,
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['lambda:GetAlias', 'lambda:UpdateAlias', 'lambda:GetProvisionedConcurrencyConfig'],
        resources: [fn.functionArn, `${fn.functionArn}:${LIVE_ALIAS}`],
      }),
    );
    role.addToPolicy(new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: ['*'] }));
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "CodeDeploy reads the deployment group's alarms with cloudwatch:DescribeAlarms, a read of alarm states only; the role may change nothing but its own function's live alias",
    });
    const group = new codedeploy.LambdaDeploymentGroup(fn, 'Canary', {
      application: this.application,
      alias,
      deploymentConfig: CANARY,
      role: iam.Role.fromRoleArn(fn, 'CanaryRoleRef', role.roleArn, { mutable: false }),
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: !this.ignoreAlarms },
      ignoreAlarmConfiguration: this.ignoreAlarms,
    });
    group.node.addDependency(role);
    this.canaries.set(handler, { fn, alias, group });
    return alias;
  }

  /** Each canary rolls back when one of its `ROLLBACK_ALARMS` fires during the deployment. */
  rollBackOn(alarms: Record<AlarmKey, cw.IAlarm>) {
    for (const [handler, { group }] of this.canaries) for (const key of ROLLBACK_ALARMS[handler]) group.addAlarm(alarms[key]);
  }

  /** The aliases and deployment groups: what must be in place (the canaries finished) before the startup sweep. */
  all() {
    return [...this.canaries.values()].flatMap((c) => [c.alias, c.group]);
  }
}
