import type { NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** CDK's own provider behind `triggers.Trigger` (it invokes the startup sweep at deploy time): not one of ours. */
export const isTriggerProvider = (logicalId: string) => logicalId.startsWith('AWSCDKTriggerCustomResourceProvider');

/** The service's own Lambda functions (routes, fallback, workers, sweeps), without CDK's trigger provider. */
export const ownFunctions = (t: Template) =>
  Object.entries(t.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(([id]) => !isTriggerProvider(id));

/** The nested stack that holds the API's routes, integrations and invoke permissions. */
export const routesTemplate = (stack: Stack) => Template.fromStack(stack.node.findChild('Routes') as NestedStack);

/**
 * The logical id, in the parent template, of the function behind a route: the route's integration
 * (nested template) names a parameter, which the nested stack resource sets to the function's ARN.
 */
export function routeFunctionId(parent: Template, nested: Template, routeKey: string): string {
  const resources = nested.toJSON().Resources as Record<string, Resource>;
  const route = Object.values(resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey === routeKey);
  if (!route) throw new Error(`No route ${routeKey}`);
  const integration = resources[route.Properties.Target['Fn::Join'][1][1].Ref]!;
  const parameter: string = integration.Properties.IntegrationUri.Ref;
  const [nestedStack] = Object.values(parent.findResources('AWS::CloudFormation::Stack') as Record<string, Resource>);
  return nestedStack!.Properties.Parameters[parameter]['Fn::GetAtt'][0];
}
