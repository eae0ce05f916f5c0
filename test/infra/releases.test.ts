import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { ALARMS } from '../../infra/constructs/alarms.ts';
import { CANARY_HANDLERS, LIVE_ALIAS, ROLLBACK_ALARMS } from '../../infra/constructs/releases.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { routeKey } from '../../shared/http/route.ts';
import { allResources, templatesOf } from '../support/template.ts';

// Safe releases (docs/deploying.md "Releases: canaries and rollback"): the trigger's routes and the two
// queue workers are invoked through a `live` alias that CodeDeploy moves 10 % for 5 minutes, then
// the rest, rolling back on their alarms.

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[]; UpdatePolicy?: Record<string, any> };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
const built = templatesOf(new FlowgateStack(app, 'flowgate-rel', { stage: 'rel' }));
const { template, functions } = built;
/** Both templates' resources, the nested one's parameters written as the stack passes them. */
const resources = allResources(built);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type) as [string, Resource][];
const roleOf = (handler: string) =>
  ofType('AWS::IAM::Role').find(([, r]) => r.Properties.Description === `Flowgate function ${handler}`)?.[0] as string;
/** The logical id of a handler's function, in whichever template holds it. */
const functionOf = (handler: string) =>
  ofType('AWS::Lambda::Function').find(([, f]) => f.Properties.Role?.['Fn::GetAtt']?.[0] === roleOf(handler))?.[0] as string;
const aliasOf = (handler: string) => {
  const found = ofType('AWS::Lambda::Alias').filter(([, a]) => a.Properties.FunctionName.Ref === functionOf(handler));
  expect(found, handler).toHaveLength(1);
  return found[0]!;
};
const alarmName = (key: keyof typeof ALARMS) => `flowgate-rel-${ALARMS[key]}`;
/** An alarm's logical id by its name (both templates: a nested stack gets it as a parameter, resolved here). */
const alarmId = (key: keyof typeof ALARMS) =>
  ofType('AWS::CloudWatch::Alarm').find(([, a]) => a.Properties.AlarmName === alarmName(key))?.[0] as string;

describe('releases through canaries', () => {
  it('the trigger (both routes) and the two queue workers, nothing else', () => {
    expect([...CANARY_HANDLERS].sort()).toEqual([
      'http/webhooks/trigger',
      'http/webhooks/trigger-legacy',
      'worker/execute',
      'worker/notify',
    ]);
    expect(ofType('AWS::Lambda::Alias')).toHaveLength(CANARY_HANDLERS.length);
    expect(ofType('AWS::CodeDeploy::DeploymentGroup')).toHaveLength(CANARY_HANDLERS.length);
    template.resourceCountIs('AWS::CodeDeploy::Application', 1);
    template.hasResourceProperties('AWS::CodeDeploy::Application', { ComputePlatform: 'Lambda', ApplicationName: 'flowgate-rel-releases' });
  });

  it.each(CANARY_HANDLERS.map((h) => [h]))(
    '%s: a live alias on the current version, moved by a canary of 10 percent for 5 minutes that rolls back on its alarms',
    (handler) => {
      const [aliasId, alias] = aliasOf(handler);
      expect(alias.Properties.Name).toBe(LIVE_ALIAS);
      const versionId = alias.Properties.FunctionVersion['Fn::GetAtt'][0];
      expect(resources[versionId]).toMatchObject({
        Type: 'AWS::Lambda::Version',
        Properties: { FunctionName: { Ref: functionOf(handler) } },
      });
      // CloudFormation hands the alias's move to the deployment group (CodeDeploy shifts it).
      const update = alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate;
      const group = resources[update.DeploymentGroupName.Ref] as Resource;
      expect(group.Type).toBe('AWS::CodeDeploy::DeploymentGroup');
      expect(group.Properties).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        DeploymentStyle: { DeploymentOption: 'WITH_TRAFFIC_CONTROL', DeploymentType: 'BLUE_GREEN' },
        AutoRollbackConfiguration: { Enabled: true, Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']) },
        AlarmConfiguration: { Enabled: true },
      });
      const [appId] = ofType('AWS::CodeDeploy::Application')[0]!;
      expect(group.Properties.ApplicationName).toEqual({ Ref: appId });
      expect(update.ApplicationName).toEqual({ Ref: appId });
      // The rollback alarms: the existing ones that this function's failure sets off.
      const alarms = (group.Properties.AlarmConfiguration.Alarms as { Name: { Ref: string } }[]).map((a) => a.Name.Ref);
      expect(alarms.sort()).toEqual(ROLLBACK_ALARMS[handler].map(alarmId).sort());
      expect(alarms.length).toBeLessThanOrEqual(10);
      // CodeDeploy's role may move this alias and read alarms, nothing else; no managed policy.
      const role = resources[group.Properties.ServiceRoleArn['Fn::GetAtt'][0]] as Resource;
      expect(role.Properties.AssumeRolePolicyDocument.Statement[0].Principal).toEqual({ Service: 'codedeploy.amazonaws.com' });
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      const roleId = group.Properties.ServiceRoleArn['Fn::GetAtt'][0];
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
        .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
      expect(statements.flatMap((s) => s.Action).sort()).toEqual(
        ['cloudwatch:DescribeAlarms', 'lambda:GetAlias', 'lambda:GetProvisionedConcurrencyConfig', 'lambda:UpdateAlias'].sort(),
      );
      const lambdaStatement = statements.find((s) => [s.Action].flat().includes('lambda:UpdateAlias'))!;
      expect(JSON.stringify(lambdaStatement.Resource)).toContain(functionOf(handler));
      expect(JSON.stringify(lambdaStatement.Resource)).toContain(`:${LIVE_ALIAS}`);
      // The deployment group is created once its role may act.
      expect(JSON.stringify(resources[update.DeploymentGroupName.Ref]?.DependsOn ?? [])).toContain(roleId);
      expect(aliasId).toMatch(/LiveAlias/);
    },
  );

  it("the trigger's routes: API Gateway invokes the live alias, and may invoke nothing else of the function", () => {
    const outputs = functions.toJSON().Outputs as Record<string, { Value: unknown }>;
    const [apiId] = ofType('AWS::ApiGatewayV2::Api')[0]!;
    for (const route of routes.filter((r) => CANARY_HANDLERS.includes(r.handler as never))) {
      const [aliasId] = aliasOf(route.handler);
      // The route's integration (in the stack) names the alias, through the route functions stack's output.
      const [, apiRoute] = ofType('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === routeKey(route))!;
      const integration = resources[apiRoute.Properties.Target['Fn::Join'][1][1].Ref]!;
      const output = (integration.Properties.IntegrationUri['Fn::GetAtt'][1] as string).replace(/^Outputs\./, '');
      expect(outputs[output]?.Value, route.handler).toEqual({ Ref: aliasId });
      const fnId = functionOf(route.handler);
      const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) =>
        [p.Properties.FunctionName?.Ref, p.Properties.FunctionName?.['Fn::GetAtt']?.[0]].some((x) => x === aliasId || x === fnId),
      );
      expect(permissions).toHaveLength(1);
      expect(permissions[0]![1].Properties).toMatchObject({ FunctionName: { Ref: aliasId }, Principal: 'apigateway.amazonaws.com' });
      expect(JSON.stringify(permissions[0]![1].Properties.SourceArn)).toContain(JSON.stringify({ Ref: apiId }));
    }
  });

  it("the queue workers: each queue's event source invokes the live alias", () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(3);
    for (const [handler, queue] of [
      ['worker/execute', 'Runs'],
      // The heavy lane's queue, through an event source of its own (shared/engine/lanes.ts).
      ['worker/execute', 'HeavyRuns'],
      ['worker/notify', 'Notifications'],
    ] as const) {
      const [aliasId] = aliasOf(handler);
      const mapping = mappings.find(([, m]) => JSON.stringify(m.Properties.EventSourceArn).includes(`"${queue}`))![1];
      // The alias's qualified name: `<function name>:live`.
      expect(JSON.stringify(mapping.Properties.FunctionName)).toContain(JSON.stringify({ Ref: aliasId }));
      expect(JSON.stringify(mapping.Properties.FunctionName)).toContain(`:${LIVE_ALIAS}`);
      // The alias invokes with the function's role: its consume grant is the function's (test/infra/iam.test.ts).
    }
  });

  it('with rollbackAlarms false (a fix deployed while its alarms fire), the canaries run and no alarm stops them', () => {
    const hotfix = templatesOf(
      new FlowgateStack(new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } }), 'flowgate-fix', {
        stage: 'fix',
        rollbackAlarms: false,
      }),
    );
    const groups = [hotfix.template, hotfix.functions].flatMap((t) =>
      Object.values(t.findResources('AWS::CodeDeploy::DeploymentGroup') as Record<string, Resource>),
    );
    expect(groups).toHaveLength(CANARY_HANDLERS.length);
    for (const g of groups) {
      expect(g.Properties).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
      });
      expect(g.Properties.AlarmConfiguration.Enabled).toBe(false);
      expect(g.Properties.AutoRollbackConfiguration.Events).toEqual(expect.arrayContaining(['DEPLOYMENT_FAILURE']));
      expect(g.Properties.AutoRollbackConfiguration.Events).not.toContain('DEPLOYMENT_STOP_ON_ALARM');
    }
  });

  it('runs the startup sweep once the canaries have finished (an alias update ends with its deployment)', () => {
    const [, trigger] = Object.entries(template.findResources('Custom::Trigger') as Record<string, Resource>)[0]!;
    for (const handler of ['worker/execute', 'worker/notify'] as const) {
      const [aliasId, alias] = aliasOf(handler);
      expect(trigger.DependsOn).toEqual(
        expect.arrayContaining([aliasId, alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate.DeploymentGroupName.Ref]),
      );
    }
    // The trigger's canaries are in the route functions stack, which the sweep waits for as a whole.
    const [routeFunctionsId] = Object.keys(template.findResources('AWS::CloudFormation::Stack'));
    expect(trigger.DependsOn).toContain(routeFunctionsId);
  });

  it('lets the startup sweep read the runs queues’ counts (both lanes), and nothing more of them', () => {
    const roleId = roleOf('sweep/startup');
    const statements = ofType('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[]);
    const reads = statements.filter((s) => [s.Action].flat().includes('sqs:GetQueueAttributes'));
    expect(reads).toHaveLength(1);
    expect([reads[0]!.Action].flat()).toEqual(['sqs:GetQueueAttributes']);
    const queueId = (name: string) => ofType('AWS::SQS::Queue').find(([, q]) => q.Properties.QueueName === `flowgate-rel-${name}`)![0];
    // Both lanes' queues, in whichever order CDK writes them, and no other.
    expect(reads[0]!.Resource).toHaveLength(2);
    expect(reads[0]!.Resource).toEqual(
      expect.arrayContaining([{ 'Fn::GetAtt': [queueId('runs'), 'Arn'] }, { 'Fn::GetAtt': [queueId('heavy-runs'), 'Arn'] }]),
    );
  });
});
