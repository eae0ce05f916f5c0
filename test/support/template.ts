import type { NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** CDK's own provider behind `triggers.Trigger` (it invokes the startup sweep at deploy time): not one of ours. */
export const isTriggerProvider = (logicalId: string) => logicalId.startsWith('AWSCDKTriggerCustomResourceProvider');

/** The service's own Lambda functions (routes, fallback, workers, sweeps), without CDK's trigger provider. */
export const ownFunctions = (t: Template) =>
  Object.entries(t.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(([id]) => !isTriggerProvider(id));

/** The nested stacks that hold the routes' functions (function, role, policy, log group, permission; later routes whole), in order. */
export const routeFunctionsTemplates = (stack: Stack) =>
  stack.node.children
    .filter((c): c is NestedStack => c.node.id.startsWith('RouteFunctions') && 'nestedStackResource' in c)
    .map((n) => Template.fromStack(n));

/** Templates as one (their resources, parameters and outputs side by side: their logical ids are unique). */
function merged(templates: Template[]): Template {
  const json = templates.map((t) => t.toJSON());
  const union = (key: string) => Object.assign({}, ...json.map((j) => j[key] ?? {}));
  return Template.fromJSON({ Resources: union('Resources'), Parameters: union('Parameters'), Outputs: union('Outputs') });
}

/**
 * The stack and its nested stacks, as CloudFormation deploys them: `functions` is the route
 * functions' templates as one, `nested` each of them; `auditEvents` the audit-events worker's stack.
 */
export const templatesOf = (stack: Stack) => {
  const nested = routeFunctionsTemplates(stack);
  const auditEvents = Template.fromStack(stack.node.findChild('AuditEvents') as NestedStack);
  return { template: Template.fromStack(stack), functions: merged(nested), nested, auditEvents };
};

/** What a nested template's parameter is given by the parent (a value as written in the parent template). */
export function parameterValue(parent: Template, name: string): unknown {
  const nested = Object.values(parent.findResources('AWS::CloudFormation::Stack') as Record<string, Resource>);
  return nested.find((n) => n.Properties.Parameters?.[name] !== undefined)?.Properties.Parameters[name];
}

/**
 * The logical id, in the route functions' template, of the function behind a route: a route kept in
 * the stack has its integration there, taking the function's ARN from an output of the nested stack;
 * a later route is whole in a nested stack, its integration naming the function directly, or (a console
 * page in another nested stack than its function's) by a parameter the stack passes from that output.
 */
export function routeFunctionId(parent: Template, functions: Template, routeKey: string): string {
  const outputs = functions.toJSON().Outputs as Record<string, { Value: unknown }>;
  const parameters = (functions.toJSON().Parameters ?? {}) as Record<string, unknown>;
  type Target = { 'Fn::GetAtt'?: [string, string]; Ref?: string };
  const resolve = (uri: Target): Target => {
    if (uri.Ref && parameters[uri.Ref] !== undefined) return resolve(parameterValue(parent, uri.Ref) as Target);
    const att = uri['Fn::GetAtt'];
    if (att && String(att[1]).startsWith('Outputs.')) return outputs[att[1].replace(/^Outputs\./, '')]!.Value as Target;
    return uri;
  };
  for (const template of [parent, functions]) {
    const resources = template.toJSON().Resources as Record<string, Resource>;
    const route = Object.values(resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey === routeKey);
    if (!route) continue;
    const integration = resources[route.Properties.Target['Fn::Join'][1][1].Ref]!;
    // The function's ARN, or (a canaried route: infra/constructs/releases.ts) its `live` alias's.
    const target = resolve(integration.Properties.IntegrationUri);
    if (target['Fn::GetAtt']) return target['Fn::GetAtt'][0];
    return aliasFunctionId(functions, target.Ref as string);
  }
  throw new Error(`No route ${routeKey}`);
}

/**
 * The resources of both templates, the route functions' written in the stack's terms (each
 * parameter reference replaced by what the stack passes), so one check covers every function.
 */
export function allResources({ template, functions }: { template: Template; functions: Template }): Record<string, Resource> {
  const parameters = Object.keys(functions.toJSON().Parameters ?? {});
  const substitute = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(substitute);
    if (v === null || typeof v !== 'object') return v;
    const ref = (v as { Ref?: unknown }).Ref;
    if (typeof ref === 'string' && parameters.includes(ref)) return parameterValue(template, ref);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, substitute(x)]));
  };
  return { ...template.toJSON().Resources, ...(substitute(functions.toJSON().Resources) as Record<string, Resource>) };
}

/** The logical id of the function behind an alias of `t`, or fails when `aliasId` is no alias. */
export function aliasFunctionId(t: Template, aliasId: string): string {
  const alias = (t.toJSON().Resources as Record<string, Resource>)[aliasId];
  if (alias?.Type !== 'AWS::Lambda::Alias') throw new Error(`${aliasId} is not an alias`);
  return alias.Properties.FunctionName.Ref;
}
