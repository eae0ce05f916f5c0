import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { FlowgateStack, type FlowgateStackProps } from '../../infra/stack.ts';
import { TABLE } from '../../shared/db/table.ts';
import type { Route } from '../../shared/http/route.ts';
import { ownFunctions } from '../support/template.ts';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string[] };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

/** The stack as `cdk synth` builds it (same feature flags), minus bundling: fast and offline. */
function synth(props: Partial<FlowgateStackProps> = {}): Template {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new FlowgateStack(app, 'flowgate-test', { stage: 'test', ...props }));
}

const template = synth();
const all = (type: string) => Object.entries(template.findResources(type) as Record<string, Resource>);
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
const statements = (type: string) => all(type).flatMap(([, r]) => list<Statement>(r.Properties.PolicyDocument.Statement));
const denyWithoutTls = {
  Effect: 'Deny',
  Action: Match.anyValue(),
  Condition: { Bool: { 'aws:SecureTransport': 'false' } },
};

/** Route key → integration → function → role → the role's policy statements, walked in the template. */
function policyOf(route: Pick<Route, 'method' | 'path'>): Statement[] {
  const [, apiRoute] = all('AWS::ApiGatewayV2::Route').find(([, r]) => r.Properties.RouteKey === `${route.method} ${route.path}`)!;
  const integrationId = apiRoute.Properties.Target['Fn::Join'][1][1].Ref;
  const integration = template.toJSON().Resources[integrationId] as Resource;
  const functionId = integration.Properties.IntegrationUri['Fn::GetAtt'][0];
  const fn = template.toJSON().Resources[functionId] as Resource;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  return all('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
    .flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement));
}

describe('FlowgateStack', () => {
  describe('functions', () => {
    it('has one function per route, plus the fallback, the two queue workers and the two sweeps', () => {
      expect(ownFunctions(template)).toHaveLength(routes.length + 5);
      // ... and CDK's provider that runs the startup sweep's trigger.
      template.resourceCountIs('AWS::Lambda::Function', routes.length + 6);
    });

    it('mounts every route of the table, and the fallback on $default', () => {
      for (const r of routes) {
        template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: `${r.method} ${r.path}` });
      }
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    });

    it('runs every function on Node 24, arm64, traced, with its own log group', () => {
      for (const [, fn] of ownFunctions(template)) {
        expect(fn.Properties.Runtime).toBe('nodejs24.x');
        expect(fn.Properties.Architectures).toEqual(['arm64']);
        expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
        expect(fn.Properties.LoggingConfig.LogGroup).toEqual({ Ref: expect.any(String) });
        expect(fn.Properties.Environment.Variables).toMatchObject({
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'flowgate',
        });
      }
    });

    it('passes optional settings as env vars only when set; PUBLIC_BASE_URL defaults to the API endpoint', () => {
      const env = (t: Template) => ownFunctions(t).map(([, fn]) => fn.Properties.Environment.Variables);
      const [apiId] = all('AWS::ApiGatewayV2::Api')[0]!;
      for (const vars of env(template)) {
        expect(vars).not.toHaveProperty('RATE_LIMITS');
        expect(vars.PUBLIC_BASE_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
      }
      const configured = synth({ rateLimits: '{"pro":20}', publicBaseUrl: 'https://flows.example.com' });
      for (const vars of env(configured)) {
        expect(vars).toMatchObject({ RATE_LIMITS: '{"pro":20}', PUBLIC_BASE_URL: 'https://flows.example.com' });
      }
    });

    it('runs the scheduled sweep every minute', () => {
      template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    });

    it('runs the startup sweep once every function of a release is in place, and again on every new release', () => {
      const startupOf = (t: Template) => {
        const [id, fn] = ownFunctions(t).find(([, f]) => JSON.stringify(f.Properties.Role).includes('SweepStartup'))!;
        const [, trigger] = Object.entries(t.findResources('Custom::Trigger') as Record<string, Resource>)[0]!;
        return { id, release: fn.Properties.Environment.Variables.RELEASE as string, trigger };
      };
      const { id, release, trigger } = startupOf(template);
      expect(release).toMatch(/^[0-9a-f]{32}$/);
      // It invokes the current version of the startup function, whose RELEASE is part of that version.
      expect(trigger.Properties).toMatchObject({ InvocationType: 'RequestResponse', ExecuteOnHandlerChange: true });
      expect(trigger.Properties.HandlerArn.Ref).toMatch(/^SweepStartupCurrentVersion/);
      // After the table and every other function of ours (the workers above all).
      const [tableId] = all('AWS::DynamoDB::Table')[0]!;
      const others = ownFunctions(template)
        .map(([fnId]) => fnId)
        .filter((fnId) => fnId !== id);
      expect(trigger.DependsOn).toEqual(expect.arrayContaining([tableId, ...others]));
      // Same code and settings, same release (synth is deterministic); other settings, a new release and version.
      expect(startupOf(synth()).release).toBe(release);
      const changed = startupOf(synth({ rateLimits: '{"pro":20}' }));
      expect(changed.release).not.toBe(release);
      expect(changed.trigger.Properties.HandlerArn.Ref).not.toBe(trigger.Properties.HandlerArn.Ref);
    });

    it('feeds the worker from the runs queue with partial batch failures', () => {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: 1,
      });
    });
  });

  describe('storage', () => {
    it('builds the table from TABLE', () => {
      template.hasResourceProperties('AWS::DynamoDB::Table', {
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: TABLE.indexes.map((ix) => ({
          IndexName: ix.name,
          KeySchema: [
            { AttributeName: ix.partitionKey, KeyType: 'HASH' },
            { AttributeName: ix.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      });
      expect(TABLE.ttlAttribute).toBe('ttl');
      template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
    });

    it('lets the table go when deletion protection is off', () => {
      const t = synth({ deletionProtection: false });
      t.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Delete',
        Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
      });
    });

    it('keeps the bucket private and TLS-only', () => {
      template.hasResourceProperties('AWS::S3::Bucket', {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike(denyWithoutTls)]) },
      });
    });

    it('makes every queue (runs, notifications and their DLQs) TLS-only', () => {
      const policies = all('AWS::SQS::QueuePolicy');
      expect(policies).toHaveLength(4);
      for (const [, p] of policies) {
        expect(p.Properties.PolicyDocument.Statement).toEqual(
          expect.arrayContaining([expect.objectContaining({ Effect: 'Deny', Condition: denyWithoutTls.Condition })]),
        );
      }
    });
  });

  describe('least privilege', () => {
    it('grants no wildcard action, and no wildcard data action on every resource', () => {
      for (const s of statements('AWS::IAM::Policy')) {
        const actions = list(s.Action);
        expect(actions).not.toContain('*');
        if (list(s.Resource).includes('*')) {
          for (const action of actions) expect(action).not.toMatch(/^(dynamodb|sqs|s3):.*\*$/);
        }
      }
    });

    it('gives a read-only route no write action', () => {
      const readOnly = (routes as readonly Route[]).find((r) => r.grants.length === 1 && r.grants[0] === 'table:read');
      expect(readOnly).toBeDefined();
      const actions = policyOf(readOnly!).flatMap((s) => list(s.Action));
      expect(actions).toContain('dynamodb:Query');
      for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
        expect(actions).not.toContain(write);
      }
      expect(actions.some((a) => a.startsWith('sqs:') || a.startsWith('s3:'))).toBe(false);
    });
  });

  describe('observability', () => {
    it('throttles the default stage and logs access without the query string', () => {
      const [[, stage] = []] = all('AWS::ApiGatewayV2::Stage');
      expect(stage?.Properties.DefaultRouteSettings).toMatchObject({
        ThrottlingRateLimit: expect.any(Number),
        ThrottlingBurstLimit: expect.any(Number),
      });
      const format: string = stage?.Properties.AccessLogSettings.Format;
      expect(format).toContain('$context.routeKey');
      expect(format).toContain('$context.requestId');
      expect(format).not.toMatch(/queryString/i);
      expect(format).not.toContain('$context.requestOverride');
    });

    it('gives every log group a retention', () => {
      const groups = all('AWS::Logs::LogGroup');
      // One per function (routes, fallback, two workers, two sweeps) and the API's access logs.
      expect(groups.length).toBe(routes.length + 6);
      for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBeGreaterThan(0);
    });
  });
});
