import { readFileSync } from 'node:fs';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { FlowgateStack, type FlowgateStackProps } from '../../infra/stack.ts';

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
  const report = new AwsSolutionsChecks().validateScope(stack);
  const findings = report.violations.map(
    (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
  );
  return { stack, report, findings };
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

  it('has none with the alarm topic, an email subscription and a custom domain either', () => {
    expect(full.findings).toEqual([]);
  });

  it('acknowledges each rule with a specific reason, and never a whole rule family', () => {
    const acks = acknowledgements(full.stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const { id, reason } of acks) {
      expect(id).toMatch(/AwsSolutions-[A-Z]+\d+/);
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
