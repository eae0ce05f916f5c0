import type { Template } from 'aws-cdk-lib/assertions';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** CDK's own provider behind `triggers.Trigger` (it invokes the startup sweep at deploy time): not one of ours. */
export const isTriggerProvider = (logicalId: string) => logicalId.startsWith('AWSCDKTriggerCustomResourceProvider');

/** The service's own Lambda functions (routes, fallback, workers, sweeps), without CDK's trigger provider. */
export const ownFunctions = (t: Template) =>
  Object.entries(t.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter(([id]) => !isTriggerProvider(id));
