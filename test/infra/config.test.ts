import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { ALARMS } from '../../infra/constructs/alarms.ts';
import type { FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { allResources, isTriggerProvider, ownFunctions, templatesOf } from '../support/template.ts';

type Resource = { Type: string; Properties: Record<string, any> };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const CERT = 'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000';

/** Both templates as one, the route functions' in the stack's terms: every check covers every function. */
function synth(props: Partial<FlowgateStackProps> = {}): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const built = templatesOf(new FlowgateStack(app, 'flowgate-cfg', { stage: 'cfg', ...props }));
  return Template.fromJSON({ ...built.template.toJSON(), Resources: allResources(built) });
}

const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
const resources = (t: Template) => t.toJSON().Resources as Record<string, Resource>;
const all = (t: Template, type: string) => Object.entries(resources(t)).filter(([, r]) => r.Type === type);
const envs = (t: Template) => ownFunctions(t).map(([, fn]) => fn.Properties.Environment.Variables);

// Synthesized at load time, like stack.test.ts: a synth takes seconds while the emulators run.
const plain = synth();
const domain = synth({ domainName: 'api.example.com', certificateArn: CERT });
const explicitBase = synth({ domainName: 'api.example.com', certificateArn: CERT, publicBaseUrl: 'https://flows.example.com' });
const withTopic = synth({ alarmEmail: 'ops@example.com' });

describe('configuration', () => {
  // Template.fromStack refuses a template whose resources form a dependency cycle (what CloudFormation
  // would refuse at deploy), so every synth above is also the cycle check.
  it('defaults PUBLIC_BASE_URL to the API endpoint without a dependency cycle', () => {
    const [apiId] = all(plain, 'AWS::ApiGatewayV2::Api')[0]!;
    for (const env of envs(plain)) expect(env.PUBLIC_BASE_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
    plain.hasOutput('PublicBaseUrl', { Value: { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] } });
  });

  it('would see a cycle', () => {
    const cyclic = {
      Resources: {
        A: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { 'Fn::GetAtt': ['B', 'QueueName'] } } },
        B: { Type: 'AWS::SQS::Queue', Properties: { QueueName: { Ref: 'A' } } },
      },
    };
    expect(() => Template.fromJSON(cyclic)).toThrow(/dependency cycle/);
  });

  it('maps a custom domain to the default stage and outputs its regional target', () => {
    const [apiId] = all(domain, 'AWS::ApiGatewayV2::Api')[0]!;
    const [domainId] = all(domain, 'AWS::ApiGatewayV2::DomainName')[0]!;
    domain.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'api.example.com',
      DomainNameConfigurations: [Match.objectLike({ CertificateArn: CERT, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
    });
    domain.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
      ApiId: { Ref: apiId },
      DomainName: { Ref: domainId },
      Stage: Match.anyValue(),
    });
    domain.hasOutput('CustomDomainTarget', { Value: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] } });
    domain.hasOutput('CustomDomainHostedZoneId', { Value: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] } });
    for (const env of envs(domain)) expect(env.PUBLIC_BASE_URL).toBe('https://api.example.com');
    plain.resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
    plain.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
  });

  it('lets an explicit publicBaseUrl win over the custom domain', () => {
    for (const env of envs(explicitBase)) expect(env.PUBLIC_BASE_URL).toBe('https://flows.example.com');
  });

  it('refuses half a custom domain', () => {
    expect(() => synth({ domainName: 'api.example.com' })).toThrow(/domainName and certificateArn/);
    expect(() => synth({ certificateArn: CERT })).toThrow(/domainName and certificateArn/);
  });

  it('attaches no WAF association (WAF does not support HTTP APIs)', () => {
    plain.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });
});

describe('least privilege', () => {
  const t = withTopic;
  const statements = [
    ...all(t, 'AWS::IAM::Policy').flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement)),
    ...all(t, 'AWS::IAM::Role').flatMap(([, r]) =>
      (r.Properties.Policies ?? []).flatMap((p: { PolicyDocument: { Statement: Statement[] } }) => p.PolicyDocument.Statement),
    ),
  ];

  it('grants no Action *, and no service-wide dynamodb:*, sqs:* or s3:* on any resource', () => {
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      for (const action of list(s.Action)) {
        expect(action).not.toBe('*');
        expect(action).not.toMatch(/^(dynamodb|sqs|s3):\*$/i);
      }
    }
  });

  it('attaches no AWS managed policy to the function roles', () => {
    for (const [id, role] of all(t, 'AWS::IAM::Role')) {
      if (!isTriggerProvider(id)) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it("lets CDK's trigger provider (basic execution role) invoke the startup sweep and nothing else", () => {
    const [[, provider] = []] = all(t, 'AWS::IAM::Role').filter(([id]) => isTriggerProvider(id));
    const invokes = (provider?.Properties.Policies ?? []).flatMap(
      (p: { PolicyDocument: { Statement: Statement[] } }) => p.PolicyDocument.Statement,
    );
    expect(invokes).toHaveLength(1);
    expect(invokes[0]).toMatchObject({ Effect: 'Allow', Action: ['lambda:InvokeFunction'] });
    expect(JSON.stringify(invokes[0].Resource)).toMatch(
      /^\[\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["SweepStartup[0-9A-F]+","Arn"\]\},":\*"\]\]\}\]$/,
    );
  });

  it('lets functions write only to their own log group', () => {
    const logActions = statements.filter((s) => list(s.Action).some((a) => a.startsWith('logs:')));
    expect(logActions.length).toBeGreaterThan(0);
    for (const s of logActions) {
      expect(list(s.Action).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      expect(s.Resource).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
    }
  });

  it('gives S3 access only as GetObject or PutObject on the artifact objects', () => {
    const [bucketId] = all(t, 'AWS::S3::Bucket').filter(([, b]) => b.Properties.LoggingConfiguration)[0]!;
    const s3 = statements.filter((s) => list(s.Action).some((a) => a.startsWith('s3:')));
    expect(s3.length).toBeGreaterThan(0);
    for (const s of s3) {
      expect(['s3:GetObject', 's3:PutObject']).toEqual(expect.arrayContaining(list(s.Action)));
      expect(s.Resource).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/*']] });
    }
  });

  it('logs artifact downloads to the access-logs bucket', () => {
    const [logsId] = all(t, 'AWS::S3::Bucket').filter(([, b]) => !b.Properties.LoggingConfiguration)[0]!;
    t.hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'artifacts/' },
    });
  });
});

describe('app context', () => {
  /** Runs infra/app.ts with the given context (cdk-nag included); bundling is skipped unless asked for. */
  const runApp = async (context: Record<string, unknown>, outdir?: string) => {
    try {
      await promisify(execFile)(`${repoRoot}node_modules/.bin/tsx`, ['infra/app.ts'], {
        cwd: repoRoot,
        env: {
          ...process.env,
          CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [], ...context }),
          ...(outdir && { CDK_OUTDIR: outdir }),
        },
        timeout: 150_000,
      });
      return { failed: false, stderr: '' };
    } catch (e) {
      return { failed: true, stderr: String((e as { stderr?: string }).stderr) };
    }
  };

  it('refuses webAclArn and points at CloudFront, a domain without certificate, malformed alarm and throttle settings, and a prod stage without alarm destination', {
    timeout: 180_000,
  }, async () => {
    const [waf, halfDomain, email, topic, throttles, prod, sweep, sample, warm] = await Promise.all([
      runApp({ webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/x/1' }),
      runApp({ domainName: 'api.example.com' }),
      runApp({ alarmEmail: 'not-an-address' }),
      runApp({ alarmTopicArn: 'ops' }),
      runApp({ throttles: '{"signup":{"rateLimit":1,"burstLimit":1}}' }),
      runApp({ stage: 'prod' }),
      runApp({ restartSweep: 'some' }),
      runApp({ requestLogSample: '2' }),
      runApp({ warmThroughput: '{"table":12000}' }),
    ]);
    for (const r of [waf, halfDomain, email, topic, throttles, prod, sweep, sample, warm]) expect(r.failed).toBe(true);
    expect(warm.stderr).toMatch(/Context warmThroughput must be JSON like .* with parts table, GSI1, GSI2, GSI3/);
    expect(sample.stderr).toMatch(/requestLogSample must be a number from 0 to 1, got 2/);
    expect(sweep.stderr).toMatch(/restartSweep must be "orphaned" or "all"/);
    expect(waf.stderr).toMatch(/WAF cannot be associated with an API Gateway HTTP API/);
    expect(waf.stderr).toMatch(/CloudFront/);
    expect(halfDomain.stderr).toMatch(/domainName and certificateArn go together/);
    expect(email.stderr).toMatch(/alarmEmail must be an email address/);
    expect(topic.stderr).toMatch(/alarmTopicArn must be an SNS topic ARN/);
    expect(throttles.stderr).toMatch(/Context throttles must be JSON like .* with classes default, login, trigger, approval/);
    expect(prod.stderr).toMatch(/stage prod needs an alarm destination/);
  });

  it('synthesizes a prod configuration offline, cdk-nag passing', { timeout: 180_000 }, async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'flowgate-synth-'));
    try {
      const r = await runApp(
        {
          stage: 'prod',
          alarmEmail: 'ops@example.com',
          throttles: '{"login":{"rateLimit":2,"burstLimit":4}}',
          tracing: 'true',
          requestLogSample: '0.1',
          warmThroughput: '{"table":{"write":20000},"GSI2":{"write":9000}}',
          onDemandThroughput: '{"table":{"read":30000}}',
        },
        outdir,
      );
      expect(r.stderr).toBe('');
      const template = JSON.parse(readFileSync(join(outdir, 'flowgate-prod.template.json'), 'utf8'));
      // The table's capacity from the context: the warm throughput given over the defaults, the on-demand maximum.
      const table = Object.values<{ Type: string; Properties: Record<string, any> }>(template.Resources).find(
        (x) => x.Type === 'AWS::DynamoDB::Table',
      )?.Properties;
      expect(table?.WarmThroughput).toEqual({ ReadUnitsPerSecond: 12_000, WriteUnitsPerSecond: 20_000 });
      expect(table?.OnDemandThroughput).toEqual({ MaxReadRequestUnits: 30_000 });
      expect(table?.GlobalSecondaryIndexes.find((ix: { IndexName: string }) => ix.IndexName === 'GSI2').WarmThroughput).toEqual({
        ReadUnitsPerSecond: 12_000,
        WriteUnitsPerSecond: 9000,
      });
      const types = Object.values<{ Type: string }>(template.Resources).map((x) => x.Type);
      expect(types.filter((t) => t === 'AWS::CloudWatch::Alarm')).toHaveLength(Object.keys(ALARMS).length);
      expect(types).toContain('AWS::SNS::Subscription');
      expect(types).toContain('AWS::CloudFormation::Stack');
      // Every function, in the nested stacks too, gets the sampling share.
      const templates = readdirSync(outdir).filter((f) => f.endsWith('.template.json'));
      const functions = templates.flatMap((f) =>
        Object.values<{ Type: string; Properties: { Environment?: { Variables: Record<string, unknown> } } }>(
          JSON.parse(readFileSync(join(outdir, f), 'utf8')).Resources,
        ).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables.POWERTOOLS_SERVICE_NAME),
      );
      expect(functions.length).toBeGreaterThan(50);
      for (const f of functions) expect(f.Properties.Environment?.Variables.REQUEST_LOG_SAMPLE).toBe('0.1');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
