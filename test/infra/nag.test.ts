import { readFileSync } from 'node:fs';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as triggers from 'aws-cdk-lib/triggers';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { nagPacks, UNINSPECTED_RESOURCE, UninspectedResources } from '../../infra/nag.ts';
import type { FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

/**
 * cdk-nag 3 is a policy-validation plugin: its findings are not construct annotations, so
 * `Annotations.fromStack(...).findError(...)` would find nothing either way. `validateScope` runs the
 * AwsSolutions pack over the construct tree and returns the findings that no
 * `Validations.of(construct).acknowledge(...)` on the resource or an ancestor covers.
 */
function nag(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowgateStack(app, 'flowgate-nag', { stage: 'nag', ...props });
  Template.fromStack(stack); // synthesize first: aspects may add resources
  const violations = nagPacks().flatMap((pack) => (pack as AwsSolutionsChecks).validateScope(stack).violations);
  const findings = violations.map((v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
  return { stack, report: { violations }, findings };
}

/** Every acknowledgement recorded in the tree, with its reason. */
function acknowledgements(root: IConstruct) {
  return root.node
    .findAll()
    .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
    .flatMap((m) => Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ id, reason })));
}

// Synthesized and checked at load time, like stack.test.ts: a synth takes seconds while the emulators run.
const plain = nag();
const full = nag({
  tracing: true,
  alarmEmail: 'ops@example.com',
  domainName: 'api.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
});

describe('cdk-nag AwsSolutions', () => {
  it('finds a plain queue non-compliant (the check is live)', () => {
    const stack = new Stack(new App(), 'bare');
    new sqs.Queue(stack, 'Queue');
    const { violations } = new AwsSolutionsChecks().validateScope(stack);
    expect(violations.map((v) => v.ruleName)).toEqual(expect.arrayContaining(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']));
  });

  it('has no unacknowledged error or warning in the default stack', () => {
    const { report, findings } = plain;
    expect(findings).toEqual([]);
    expect(report.violations.filter((v) => v.severity === 'error')).toEqual([]);
    expect(report.violations.filter((v) => v.severity === 'warning')).toEqual([]);
  });

  it('has none with the alarm topic, an email subscription, a custom domain and tracing either', () => {
    expect(full.findings).toEqual([]);
  });

  it('fails a synth with an unacknowledged finding once registered on the app (as infra/app.ts does)', () => {
    const app = new App();
    Validations.of(app).addPlugins(...nagPacks(app));
    new sqs.Queue(new Stack(app, 'bare'), 'Queue');
    expect(() => app.synth()).toThrow(/The SQS queue/);
  });
});

describe('resources cdk-nag cannot inspect', () => {
  const triggered = (acknowledge: boolean) => {
    const stack = new Stack(new App(), 'triggered');
    const handler = new lambda.Function(stack, 'Fn', {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {}'),
    });
    new triggers.Trigger(stack, 'Trigger', { handler });
    if (acknowledge) Validations.of(stack).acknowledge({ id: UNINSPECTED_RESOURCE, reason: 'a test' });
    const { violations } = new UninspectedResources().validateScope(stack);
    return violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`));
  };

  it("reports CDK's trigger provider (raw CloudFormation, skipped by every AwsSolutions rule) until acknowledged", () => {
    expect(triggered(false)).toEqual([
      `${UNINSPECTED_RESOURCE} triggered/AWSCDK.TriggerCustomResourceProviderCustomResourceProvider/Role`,
      `${UNINSPECTED_RESOURCE} triggered/AWSCDK.TriggerCustomResourceProviderCustomResourceProvider/Handler`,
    ]);
    expect(triggered(true)).toEqual([]);
  });

  it('is acknowledged in the stack on the trigger provider alone, with the reason', () => {
    const acks = full.stack.node
      .findAll()
      .filter((c) =>
        c.node.metadata.some(
          (m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && JSON.stringify(m.data).includes(UNINSPECTED_RESOURCE),
        ),
      );
    expect(acks.map((c) => c.node.id)).toEqual(['AWSCDK.TriggerCustomResourceProviderCustomResourceProvider']);
  });

  it('acknowledges each rule with a specific reason, and never a whole rule family', () => {
    const acks = acknowledgements(full.stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const { id, reason } of acks) {
      expect(id).toMatch(/AwsSolutions-[A-Z]+\d+|Flowgate-UninspectedResource/);
      // IAM5 findings are acknowledged one resource pattern at a time.
      if (id.includes('IAM5')) expect(id).toMatch(/IAM5\[Resource::.+\]$/);
      expect(reason.length).toBeGreaterThan(60);
    }
    const ids = new Set(acks.map((a) => a.id.replace(/^Annotation::/i, '')));
    expect(ids.has('AwsSolutions-APIG4')).toBe(true);
    const apig4 = acks.find((a) => a.id.endsWith('AwsSolutions-APIG4'));
    expect(apig4?.reason).toContain('Authorization is done in the functions: API keys, sessions and HMAC');
    // The managed-policy and action-wildcard findings are fixed, not acknowledged.
    for (const id of ids) {
      expect(id).not.toMatch(/IAM4|IAM5\[Action::/);
    }
  });
});
