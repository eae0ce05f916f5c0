import { CfnResource, type IPolicyValidationPlugin } from 'aws-cdk-lib';
import { AwsSolutionsChecks, NagMessageLevel, NagPack, NagRuleCompliance } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** The rule of `UninspectedResources`, as acknowledged: `Validations.of(c).acknowledge({ id: UNINSPECTED_RESOURCE, ... })`. */
export const UNINSPECTED_RESOURCE = 'Flowgate-UninspectedResource';

/** A raw CfnResource of an AWS type; CDK's own metadata resource (analytics, no AWS resource) is none. */
const uninspected = (n: CfnResource) =>
  n.constructor === CfnResource && n.cfnResourceType.startsWith('AWS::') && n.cfnResourceType !== 'AWS::CDK::Metadata';

/**
 * cdk-nag's rules recognise resources by their L1 class (`CfnRole`, `CfnFunction`, ...), so a
 * resource written as a raw `CfnResource` (CDK's own custom-resource providers are) passes every
 * rule unseen. This pack reports each such AWS resource; each must be acknowledged with a reason.
 */
export class UninspectedResources extends NagPack {
  readonly name = 'Flowgate';

  constructor(scope?: IConstruct) {
    super(scope);
    this.packName = 'Flowgate';
  }

  protected checkResource(node: CfnResource): void {
    this.applyRule({
      ruleSuffixOverride: UNINSPECTED_RESOURCE.slice('Flowgate-'.length),
      info: 'cdk-nag cannot inspect this resource: it is a raw CfnResource, not its typed L1 class.',
      explanation: 'Review what it grants and runs by hand, then acknowledge it with the reason.',
      level: NagMessageLevel.ERROR,
      node,
      rule: (n) => (uninspected(n) ? NagRuleCompliance.NON_COMPLIANT : NagRuleCompliance.COMPLIANT),
    });
  }
}

/** The checks every synth runs (`infra/app.ts`): AWS Solutions, and the resources it cannot see. */
export const nagPacks = (scope?: IConstruct): IPolicyValidationPlugin[] => [new AwsSolutionsChecks(scope), new UninspectedResources(scope)];
