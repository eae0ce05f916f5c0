import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { type Worker, WORKERS, workerSettings } from '../../functions/bindings.ts';
import { type Setting, settingsFor } from '../../shared/config.ts';
import { TABLE_ACTIONS } from '../../infra/iam.ts';
import { DEFAULTS, type FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { ROUTES_PER_NESTED_STACK, routeStackOf, WHOLE_ROUTES_PER_NESTED_STACK } from '../../infra/constructs/api.ts';
import { ROUTES_IN_STACK } from '../../infra/constructs/placement.ts';
import { TABLE, WORKER_TIMEOUT_SECONDS } from '../../shared/db/table.ts';
import { isConsolePage, type Route, routeKey } from '../../shared/http/route.ts';
import { ASSET } from '../../shared/console/asset-names.generated.ts';
import { apiEvent, lambdaContext } from '../support/http.ts';
import { aliasFunctionId, allResources, ownFunctions, routeFunctionId, templatesOf } from '../support/template.ts';
import { isCanaried, RESOURCES_PER_CANARY } from '../../infra/constructs/releases.ts';
import { functionOfRoute, routeFunctions as functionSpecs } from '../../infra/route-functions.ts';
import { CONSOLE_FUNCTIONS } from '../../functions/route-kinds.ts';
import { identityOf, runAs } from '../../infra/local/iam.ts';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string[] };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

/** The stack as `cdk synth` builds it (same feature flags), minus bundling: fast and offline. */
function build(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowgateStack(app, 'flowgate-test', { stage: 'test', ...props });
  return templatesOf(stack);
}
const synth = (props: Partial<FlowgateStackProps> = {}) => build(props).template;
/** The heavy-account threshold the functions of a template are given (one value for all of them). */
const thresholdOf = (t: Template) =>
  new Set(ownFunctions(t).map(([, f]) => f.Properties.Environment.Variables.HEAVY_ACCOUNT_REQUESTS_PER_MINUTE));
type Built = ReturnType<typeof build>;
/** Every function of ours: the stack's (fallback, workers, sweeps), the routes' and the audit-events worker's (nested stacks). */
const functionsOf = (b: Built) => [...ownFunctions(b.template), ...ownFunctions(b.functions), ...ownFunctions(b.auditEvents)];

const built = build();
const { template, functions: routeFunctions, nested } = built;
/** The route table's functions: one per API route, three for the console's pages. */
const specs = functionSpecs();
const apiRoutes = (routes as readonly Route[]).filter((r) => !isConsolePage(r));
/** Resources of a type in both templates (logical ids are unique across them). */
const all = (type: string) => [template, routeFunctions].flatMap((t) => Object.entries(t.findResources(type) as Record<string, Resource>));
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
const statements = (type: string) => all(type).flatMap(([, r]) => list<Statement>(r.Properties.PolicyDocument.Statement));
/** A route's DynamoDB actions limited to key families: `UpdateItem on AUTHFAIL#*`, … */
const keyedActions = (route: Route) =>
  policyOf(route)
    .filter((s) => s.Condition && list(s.Action).every((a) => a.startsWith('dynamodb:')))
    .flatMap((s) =>
      list(s.Action).map((a) => `${a} on ${(s.Condition as any)['ForAllValues:StringLike']['dynamodb:LeadingKeys'].join(' ')}`),
    )
    .sort();
const AUTHFAIL = 'dynamodb:UpdateItem on AUTHFAIL#*';
const METER = 'dynamodb:UpdateItem on ACC#* RATE#* KEY#*';
const denyWithoutTls = {
  Effect: 'Deny',
  Action: Match.anyValue(),
  Condition: { Bool: { 'aws:SecureTransport': 'false' } },
};

/** Route key → integration → function → role → the role's policy statements, walked in the templates. */
function policyOf(route: Pick<Route, 'method' | 'path'>): Statement[] {
  const fn = routeFunctions.toJSON().Resources[routeFunctionId(template, routeFunctions, routeKey(route))] as Resource;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0];
  return all('AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
    .flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement));
}

/** A route's DynamoDB actions on any item (statements without a condition). */
const tableActions = (route: Route) =>
  policyOf(route)
    .filter((s) => !s.Condition)
    .flatMap((s) => list(s.Action))
    .filter((a) => a.startsWith('dynamodb:'))
    .sort();

describe('FlowgateStack', () => {
  describe('functions', () => {
    it("has one function per API route and three for the console's pages, plus the fallback, the two queue workers and the two sweeps", () => {
      expect(specs.size).toBe(apiRoutes.length + 3);
      expect(ownFunctions(routeFunctions)).toHaveLength(specs.size);
      // ... the fallback, two workers, two sweeps and the schedules' fire function.
      expect(ownFunctions(template)).toHaveLength(6);
      // ... and CDK's provider that runs the startup sweep's trigger.
      template.resourceCountIs('AWS::Lambda::Function', 7);
    });

    it("mounts every API route on a function of its own and the console's pages on three (in the route functions stacks), and the fallback on $default", () => {
      const ids = apiRoutes.map((r) => routeFunctionId(template, routeFunctions, routeKey(r)));
      expect(new Set(ids).size).toBe(apiRoutes.length);
      const pages = (routes as readonly Route[]).filter(isConsolePage).map((r) => routeFunctionId(template, routeFunctions, routeKey(r)));
      expect(new Set(pages).size).toBe(3);
      for (const id of [...ids, ...pages]) expect(id).toMatch(/^Http/);
      for (const id of pages) expect(ids).not.toContain(id);
      const kept = routes.filter((r) => ROUTES_IN_STACK.has(routeKey(r))).length;
      template.resourceCountIs('AWS::ApiGatewayV2::Route', kept + 1);
      routeFunctions.resourceCountIs('AWS::ApiGatewayV2::Route', routes.length - kept);
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
    });

    it('gives the functions that hash passwords (scrypt N=2^17, 128 MiB a hash) 1,024 MB', () => {
      const memory = (prefix: string) =>
        ownFunctions(routeFunctions)
          .filter(([id]) => id.startsWith(prefix))
          .map(([, fn]) => fn.Properties.MemorySize);
      expect(memory('HttpAuthLogin')).toEqual([1024]);
      expect(memory('HttpMembersCreate')).toEqual([1024]);
    });

    it('runs every function on Node 24, arm64, untraced, without runtime source maps, with its own log group', () => {
      for (const [, fn] of functionsOf(built)) {
        expect(fn.Properties.Runtime).toBe('nodejs24.x');
        expect(fn.Properties.Architectures).toEqual(['arm64']);
        expect(fn.Properties.TracingConfig).toBeUndefined();
        expect(fn.Properties.LoggingConfig.LogGroup).toEqual({ Ref: expect.any(String) });
        expect(fn.Properties.Environment.Variables).toMatchObject({ POWERTOOLS_SERVICE_NAME: 'flowgate' });
        // No --enable-source-maps (test/infra/source-maps.test.ts: the maps are not in the assets either).
        expect(fn.Properties.Environment.Variables).not.toHaveProperty('NODE_OPTIONS');
      }
    });

    it('passes optional settings as env vars only when set; PUBLIC_BASE_URL defaults to the API endpoint', () => {
      const env = (t: Template) => ownFunctions(t).map(([, fn]) => fn.Properties.Environment.Variables);
      const [apiId] = all('AWS::ApiGatewayV2::Api')[0]!;
      // The route functions' stack gets the endpoint as a parameter.
      const routeEnv = env(routeFunctions);
      expect(routeEnv).toHaveLength(specs.size);
      for (const vars of routeEnv) expect(vars.PUBLIC_BASE_URL).toEqual({ Ref: expect.stringMatching(/ApiEndpoint$/) });
      for (const vars of [...env(template), ...routeEnv]) expect(vars.AUTH_FAILURE_LIMIT).toBe('300');
      for (const vars of env(template)) {
        expect(vars).not.toHaveProperty('RATE_LIMITS');
        expect(vars.PUBLIC_BASE_URL).toEqual({ 'Fn::GetAtt': [apiId, 'ApiEndpoint'] });
      }
      const configured = synth({ rateLimits: '{"pro":20}', publicBaseUrl: 'https://flows.example.com', authFailureLimit: 50 });
      for (const vars of env(configured)) {
        expect(vars).toMatchObject({ RATE_LIMITS: '{"pro":20}', PUBLIC_BASE_URL: 'https://flows.example.com', AUTH_FAILURE_LIMIT: '50' });
      }
    });

    it('gives every function the settings it checks at its cold start (its grants and its own)', () => {
      const needs = new Map<string, Setting[]>([
        ...[...specs.values()].map((f): [string, Setting[]] => [f.handler, settingsFor(f.routes.flatMap((r) => r.grants))]),
        // The stack's workflows' function exists only with the workflowsDir context (test/infra/iam.test.ts synthesizes one).
        ...(Object.keys(WORKERS) as Worker[]).filter((w) => w !== 'code/apply').map((w): [string, Setting[]] => [w, workerSettings(w)]),
      ]);
      const checked = new Set<string>();
      for (const t of [template, routeFunctions, built.auditEvents]) {
        const roles = t.findResources('AWS::IAM::Role') as Record<string, Resource>;
        for (const [, fn] of ownFunctions(t)) {
          const handler = /^Flowgate function (.+)$/.exec(roles[fn.Properties.Role['Fn::GetAtt'][0]]?.Properties.Description)?.[1];
          if (!handler || handler === 'http/fallback') continue;
          const vars = fn.Properties.Environment.Variables;
          for (const setting of needs.get(handler) ?? ['(undeclared function)'])
            expect(vars, `${handler}: ${setting}`).toHaveProperty(setting);
          checked.add(handler);
        }
      }
      expect([...checked].sort()).toEqual([...needs.keys()].sort());
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
      const [routeFunctionsId] = Object.keys(template.findResources('AWS::CloudFormation::Stack'));
      expect(trigger.DependsOn).toEqual(expect.arrayContaining([tableId, ...others, routeFunctionsId]));
      // Same code and settings, same release (synth is deterministic); other settings, a new release and version.
      expect(startupOf(synth()).release).toBe(release);
      const changed = startupOf(synth({ rateLimits: '{"pro":20}' }));
      expect(changed.release).not.toBe(release);
      expect(changed.trigger.Properties.HandlerArn.Ref).not.toBe(trigger.Properties.HandlerArn.Ref);
    });

    it('a release interrupts only orphaned webhook runs by default; restartSweep "all" makes it a hard cut', () => {
      const sweepOf = (t: Template) =>
        ownFunctions(t).find(([, f]) => JSON.stringify(f.Properties.Role).includes('SweepStartup'))?.[1].Properties.Environment.Variables
          .RESTART_SWEEP;
      expect(sweepOf(template)).toBe('orphaned');
      expect(sweepOf(synth({ restartSweep: 'all' }))).toBe('all');
    });

    it('feeds each worker from its queues with partial batch failures and a maximum concurrency; runs (both lanes) without a batching window', () => {
      const mappings = all('AWS::Lambda::EventSourceMapping').map(([, m]) => m.Properties);
      const of = (t: Template, queue: string) => {
        const [queueId] = Object.entries(t.findResources('AWS::SQS::Queue') as Record<string, Resource>).find(
          ([, q]) =>
            // The whole name: `-runs` also ends `flowgate-test-heavy-runs`.
            q.Properties.QueueName === `flowgate-test-${queue}`,
        )!;
        return Object.values(t.findResources('AWS::Lambda::EventSourceMapping') as Record<string, Resource>)
          .map((m) => m.Properties)
          .find((m) => m.EventSourceArn['Fn::GetAtt'][0] === queueId)!;
      };
      expect(mappings).toHaveLength(3);
      for (const m of mappings) expect(m).toMatchObject({ FunctionResponseTypes: ['ReportBatchItemFailures'], BatchSize: 10 });
      expect(of(template, 'runs')).toMatchObject({ ScalingConfig: { MaximumConcurrency: DEFAULTS.runsWorkerConcurrency } });
      expect(of(template, 'runs').MaximumBatchingWindowInSeconds).toBeUndefined();
      // The heavy lane: the same worker (its live alias), its own queue and maximum concurrency.
      expect(of(template, 'heavy-runs')).toMatchObject({ ScalingConfig: { MaximumConcurrency: DEFAULTS.heavyRunsWorkerConcurrency } });
      expect(of(template, 'heavy-runs').MaximumBatchingWindowInSeconds).toBeUndefined();
      expect(of(template, 'heavy-runs').FunctionName).toEqual(of(template, 'runs').FunctionName);
      expect(of(template, 'heavy-runs').EventSourceArn).not.toEqual(of(template, 'runs').EventSourceArn);
      expect(of(template, 'notifications')).toMatchObject({
        ScalingConfig: { MaximumConcurrency: DEFAULTS.notifyWorkerConcurrency },
        MaximumBatchingWindowInSeconds: 1,
      });
      const set = synth({
        runsWorkerConcurrency: 7,
        heavyRunsWorkerConcurrency: 9,
        notifyWorkerConcurrency: 3,
        runsBatchingWindowSeconds: 2,
        heavyAccountRequestsPerMinute: 40,
      });
      expect(of(set, 'runs')).toMatchObject({ ScalingConfig: { MaximumConcurrency: 7 }, MaximumBatchingWindowInSeconds: 2 });
      expect(of(set, 'heavy-runs')).toMatchObject({ ScalingConfig: { MaximumConcurrency: 9 }, MaximumBatchingWindowInSeconds: 2 });
      expect(of(set, 'notifications')).toMatchObject({ ScalingConfig: { MaximumConcurrency: 3 } });
      // The heavy-account threshold as set, not derived from runsWorkerConcurrency.
      expect(thresholdOf(set)).toEqual(new Set(['40']));
    });

    it('refuses a maximum concurrency outside 2-1000 or above the reserved concurrency', () => {
      expect(() => synth({ runsWorkerConcurrency: 1 })).toThrow(/runsWorkerConcurrency must be a whole number from 2 to 1000/);
      expect(() => synth({ notifyWorkerConcurrency: 1001 })).toThrow(/notifyWorkerConcurrency must be a whole number/);
      expect(() => synth({ reservedConcurrency: 20 })).toThrow(/runsWorkerConcurrency \(50\) exceeds reservedConcurrency \(20\)/);
      expect(() => synth({ heavyRunsWorkerConcurrency: 1 })).toThrow(
        /heavyRunsWorkerConcurrency must be a whole number from 2 to 1000, got 1/,
      );
      expect(() => synth({ heavyRunsWorkerConcurrency: 2.5 })).toThrow(/heavyRunsWorkerConcurrency must be a whole number/);
      expect(() => synth({ reservedConcurrency: 60, heavyRunsWorkerConcurrency: 70 })).toThrow(
        /heavyRunsWorkerConcurrency \(70\) exceeds reservedConcurrency \(60\)/,
      );
      // Both lanes invoke the runs worker: their maximums add up against its reserved concurrency.
      expect(() => synth({ reservedConcurrency: 60 })).toThrow(
        /runsWorkerConcurrency \(50\) and heavyRunsWorkerConcurrency \(50\) add up to 100, above reservedConcurrency \(60\)/,
      );
      // Within it together: and the heavy-account threshold follows the main lane (30 × 10 / 2).
      expect(thresholdOf(synth({ reservedConcurrency: 60, runsWorkerConcurrency: 30, heavyRunsWorkerConcurrency: 30 }))).toEqual(
        new Set(['150']),
      );
    });

    it('gives the functions the heavy-account threshold: half the runs the main lane holds at once, unless set; refuses a bad one', () => {
      expect(thresholdOf(template)).toEqual(new Set([String((DEFAULTS.runsWorkerConcurrency * 10) / 2)]));
      expect(thresholdOf(routeFunctions)).toEqual(new Set(['250']));
      expect(() => synth({ heavyAccountRequestsPerMinute: 0 })).toThrow(
        /heavyAccountRequestsPerMinute must be a whole number of requests of at least 1, got 0/,
      );
      expect(() => synth({ heavyAccountRequestsPerMinute: 12.5 })).toThrow(/heavyAccountRequestsPerMinute must be a whole number/);
    });

    it('gives both workers the timeout of WORKER_TIMEOUT_SECONDS', () => {
      const timeouts = ownFunctions(template)
        .filter(([, f]) => /Worker(Execute|Notify)/.test(JSON.stringify(f.Properties.Role)))
        .map(([, f]) => f.Properties.Timeout);
      expect(timeouts).toEqual([WORKER_TIMEOUT_SECONDS, WORKER_TIMEOUT_SECONDS]);
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
          Projection: { ProjectionType: 'KEYS_ONLY' },
        })),
      });
      expect(TABLE.ttlAttribute).toBe('ttl');
      template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
    });

    it("has GSI3, the account's runs (issue 32), and every function that reads the table may Query it", () => {
      expect(TABLE.indexes.map((ix) => ix.name)).toEqual(['GSI1', 'GSI2', 'GSI3']);
      const reads = statements('AWS::IAM::Policy').filter((s) => list(s.Action).includes('dynamodb:Query'));
      expect(reads.length).toBeGreaterThan(0);
      for (const s of reads) expect(JSON.stringify(s.Resource)).toContain('/index/GSI3');
      const listRuns = policyOf({ method: 'GET', path: '/api/v1/executions' }).filter((s) => list(s.Action).includes('dynamodb:Query'));
      expect(JSON.stringify(listRuns.map((s) => s.Resource))).toContain('/index/GSI3');
    });

    it("keeps finished runs for retentionDays: the functions' RETENTION_DAYS (TTL) and the artifacts' lifecycle agree", () => {
      const expiry = (t: Template) =>
        Object.values(t.findResources('AWS::S3::Bucket'))
          .flatMap((b) => b.Properties.LifecycleConfiguration?.Rules ?? [])
          .filter((r: { AbortIncompleteMultipartUpload?: unknown }) => r.AbortIncompleteMultipartUpload)
          .map((r: { ExpirationInDays?: number }) => r.ExpirationInDays);
      const days = (t: Template) => new Set(ownFunctions(t).map(([, fn]) => fn.Properties.Environment.Variables.RETENTION_DAYS));
      expect(expiry(template)).toEqual([90]);
      expect([...days(template)]).toEqual(['90']);
      expect([...days(routeFunctions)]).toEqual(['90']);
      const { template: kept, functions } = build({ retentionDays: 30 });
      expect(expiry(kept)).toEqual([30]);
      expect([...days(kept)]).toEqual(['30']);
      expect([...days(functions)]).toEqual(['30']);
      expect(() => build({ retentionDays: 0 })).toThrow(/retentionDays/);
    });

    it('keeps succeeded webhook runs succeededWebhookRetentionDays (30, never past retentionDays): SUCCEEDED_WEBHOOK_RETENTION_DAYS', () => {
      const days = (t: Template) =>
        new Set(ownFunctions(t).map(([, fn]) => fn.Properties.Environment.Variables.SUCCEEDED_WEBHOOK_RETENTION_DAYS));
      expect([...days(template)]).toEqual(['30']);
      expect([...days(routeFunctions)]).toEqual(['30']);
      expect([...days(build({ retentionDays: 14 }).template)]).toEqual(['14']);
      expect([...days(build({ succeededWebhookRetentionDays: 7 }).functions)]).toEqual(['7']);
      expect(() => build({ succeededWebhookRetentionDays: 91 })).toThrow(/succeededWebhookRetentionDays/);
      expect(() => build({ succeededWebhookRetentionDays: 0 })).toThrow(/succeededWebhookRetentionDays/);
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

    it('makes every queue (runs, both lanes, notifications and their DLQs) TLS-only', () => {
      const policies = all('AWS::SQS::QueuePolicy');
      // ... and the scheduler's DLQ, and the asynchronous invocations' on-failure queue.
      expect(policies).toHaveLength(8);
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

    it('gives a read-only console route reads only, and no queue or bucket', () => {
      const readOnly = (routes as readonly Route[]).find(
        (r) => r.auth.kind === 'session' && r.grants.length === 1 && r.grants[0] === 'table:read',
      );
      expect(readOnly).toBeDefined();
      expect(tableActions(readOnly!)).toEqual([...TABLE_ACTIONS.read].sort());
      // ... and the failed-authentication counter of its address, no other item.
      expect(keyedActions(readOnly!)).toEqual([AUTHFAIL]);
      expect(
        policyOf(readOnly!)
          .flatMap((s) => list(s.Action))
          .some((a) => a.startsWith('sqs:') || a.startsWith('s3:')),
      ).toBe(false);
    });

    it("gives an API-key route that only reads its reads plus the UpdateItem of metering (the rate counters' and key's items only), and no other write", () => {
      const metered = (routes as readonly Route[]).filter((r) => r.auth.kind === 'apiKey' && !r.grants.includes('table:write'));
      expect(metered.map(routeKey)).toEqual(expect.arrayContaining(['GET /api/v1/executions', 'GET /api/v1/me']));
      for (const r of metered) {
        expect(tableActions(r)).toEqual([...TABLE_ACTIONS.read].sort());
        expect(keyedActions(r)).toEqual([METER, AUTHFAIL].sort());
      }
    });

    it("grants every route's function exactly the table actions of its grants (a console function's: all of its pages')", () => {
      for (const r of routes as readonly Route[]) {
        const { grants, routes: served } = functionOfRoute(r);
        if (!isConsolePage(r)) expect(served, routeKey(r)).toEqual([r]);
        const expected = new Set<string>([
          ...(grants.includes('table:read') ? TABLE_ACTIONS.read : []),
          ...(grants.includes('table:write') ? TABLE_ACTIONS.write : []),
        ]);
        expect(tableActions(r), routeKey(r)).toEqual([...expected].sort());
        const keyed = [
          // A key's route, or a session route that takes a key too (`keyScope`), meters the key.
          ...(served.some((x) => x.auth.kind === 'apiKey' || (x.auth.kind === 'session' && x.auth.keyScope)) ? [METER] : []),
          ...(served.some((x) => x.auth.kind !== 'none') ? [AUTHFAIL] : []),
          ...(grants.includes('table:audit') ? ['dynamodb:PutItem on AUDIT#*'] : []),
        ];
        expect(keyedActions(r), routeKey(r)).toEqual(keyed.sort());
      }
    });

    it('grants no DynamoDB action the code does not issue: no Scan, stream or DescribeTable', () => {
      const used = new Set<string>([...TABLE_ACTIONS.read, ...TABLE_ACTIONS.write]);
      const granted = statements('AWS::IAM::Policy').flatMap((s) => list(s.Action).filter((a) => a.startsWith('dynamodb:')));
      expect(granted.length).toBeGreaterThan(0);
      for (const a of granted) expect(used.has(a), a).toBe(true);
    });

    const roleStatements = (handler: string) => {
      const [roleId] = all('AWS::IAM::Role').find(([, r]) => r.Properties.Description === `Flowgate function ${handler}`)!;
      return all('AWS::IAM::Policy')
        .filter(([, p]) => p.Properties.Roles.some((r: { Ref: string }) => r.Ref === roleId))
        .flatMap(([, p]) => list<Statement>(p.Properties.PolicyDocument.Statement));
    };
    const actionsOf = (handler: string) => roleStatements(handler).flatMap((s) => list(s.Action));

    it('gives the notifications worker table reads, writes to its own key families only (the delivery log, approval messages), and its own queue: no bucket', () => {
      const statements = roleStatements('worker/notify');
      const actions = statements.flatMap((s) => list(s.Action));
      const writes = statements.filter((s) => list(s.Action).some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a)));
      // One statement writes, Put and Update only, each conditioned on the partition key's prefix.
      expect(writes).toHaveLength(1);
      expect(list(writes[0]?.Action).sort()).toEqual(['dynamodb:PutItem', 'dynamodb:UpdateItem']);
      expect(writes[0]?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DLV#*', 'APMSG#*'] } });
      expect(actions).not.toContain('dynamodb:DeleteItem');
      expect(actions.filter((a) => a.startsWith('dynamodb:') && !writes[0]?.Action.includes(a)).sort()).toEqual(
        [...TABLE_ACTIONS.read].sort(),
      );
      // It puts a message's next attempt back on its own queue, and may send to no other.
      expect(actions).toContain('sqs:ChangeMessageVisibility');
      expect(actions).toContain('sqs:SendMessage');
      expect(actions.some((a) => a.startsWith('s3:'))).toBe(false);
      const sqsResources = statements.filter((s) => list(s.Action).some((a) => a.startsWith('sqs:'))).flatMap((s) => list(s.Resource));
      expect(JSON.stringify(sqsResources)).toMatch(/"Notifications[0-9A-F]{8}"/);
      expect(JSON.stringify(sqsResources)).not.toMatch(/"Runs|Dlq/);
      const [, notify] = ownFunctions(template).find(([, f]) => JSON.stringify(f.Properties.Role).includes('WorkerNotify'))!;
      expect(Object.keys(notify.Properties.Environment.Variables)).toEqual(expect.arrayContaining(['TABLE_NAME', 'NOTIFY_QUEUE_URL']));
      expect(notify.Properties.Environment.Variables).not.toHaveProperty('RUNS_QUEUE_URL');
      expect(notify.Properties.Environment.Variables).not.toHaveProperty('ARTIFACTS_BUCKET');
    });

    it('lets the runs worker write artifacts but not read them back', () => {
      const actions = actionsOf('worker/execute');
      expect(actions).toContain('s3:PutObject');
      expect(actions).not.toContain('s3:GetObject');
      expect(actions).toContain('sqs:SendMessage');
    });

    it('sends with sqs:SendMessage only (no batch, no wildcard); a statement may also hold a consumer’s own actions on its queue', () => {
      const sends = statements('AWS::IAM::Policy').filter((s) => list(s.Action).some((a) => /^sqs:(Send|\*)/.test(a)));
      expect(sends.length).toBeGreaterThan(0);
      const CONSUMER = [
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
      ];
      for (const s of sends) expect(list(s.Action).filter((a) => !CONSUMER.includes(a))).toEqual(['sqs:SendMessage']);
    });
  });

  describe('room to grow', () => {
    // CloudFormation takes 500 resources, 200 parameters and 200 outputs a template; keep 30 % free in each.
    const counts = (t: Template): [resources: number, parameters: number, outputs: number] => {
      const json = t.toJSON();
      return [Object.keys(json.Resources ?? {}).length, Object.keys(json.Parameters ?? {}).length, Object.keys(json.Outputs ?? {}).length];
    };

    it('keeps at least 30 % headroom in the stack and in each of its nested stacks', () => {
      expect(nested.length).toBe(new Set(routes.map((r) => routeStackOf(r).n)).size);
      for (const t of [template, ...nested, built.auditEvents]) {
        const [resources, parameters, outputs] = counts(t);
        expect(resources).toBeLessThanOrEqual(0.7 * 500);
        expect(parameters).toBeLessThanOrEqual(0.7 * 200);
        expect(outputs).toBeLessThanOrEqual(0.7 * 200);
      }
    });

    // The routes of ROUTES_IN_STACK keep their API route and integration in the stack; the others are whole in theirs.
    const kept = routes.filter((r) => ROUTES_IN_STACK.has(routeKey(r))).length;
    const whole = routes.length - kept;
    /** The routes released through a canary (the trigger's): 5 resources more each, beside their function. */
    const canaried = routes.filter((r) => isCanaried(r.handler)).length;
    it('puts 5 resources a function (function, role, policy, log group, invoke permission) in the route functions stacks, a kept route 2 in the stack, a later one 2 in its nested stack', () => {
      expect(canaried).toBe(2);
      expect(counts(routeFunctions)[0]).toBe(5 * specs.size + 2 * whole + RESOURCES_PER_CANARY * canaried);
      for (const type of ['AWS::Lambda::Function', 'AWS::Logs::LogGroup', 'AWS::Lambda::Permission']) {
        routeFunctions.resourceCountIs(type, specs.size);
      }
      // ... and the canaries' CodeDeploy roles and their policies.
      for (const type of ['AWS::IAM::Role', 'AWS::IAM::Policy']) routeFunctions.resourceCountIs(type, specs.size + canaried);
      for (const type of ['AWS::Lambda::Version', 'AWS::Lambda::Alias', 'AWS::CodeDeploy::DeploymentGroup'])
        routeFunctions.resourceCountIs(type, canaried);
      routeFunctions.resourceCountIs('AWS::ApiGatewayV2::Route', whole);
      routeFunctions.resourceCountIs('AWS::ApiGatewayV2::Integration', whole);
      // ... and the fallback's; the stack's two permissions are the fallback's and the sweep schedule's.
      template.resourceCountIs('AWS::ApiGatewayV2::Route', kept + 1);
      template.resourceCountIs('AWS::ApiGatewayV2::Integration', kept + 1);
      template.resourceCountIs('AWS::Lambda::Permission', 2);
    });

    it("lets API Gateway invoke each API route's function from that route of the stack's API only, a console function from its pages' paths", () => {
      const [apiId] = all('AWS::ApiGatewayV2::Api')[0]!;
      const resources = allResources(built);
      for (const route of routes) {
        const fnId = routeFunctionId(template, routeFunctions, routeKey(route));
        const onFunction = Object.values(resources).filter(
          (r) => r.Type === 'AWS::Lambda::Permission' && r.Properties.FunctionName?.['Fn::GetAtt']?.[0] === fnId,
        );
        const onAlias = Object.values(resources).filter((r) => {
          const ref = r.Properties.FunctionName?.Ref;
          return (
            r.Type === 'AWS::Lambda::Permission' &&
            resources[ref]?.Type === 'AWS::Lambda::Alias' &&
            aliasFunctionId(routeFunctions, ref) === fnId
          );
        });
        // A canaried route's API may invoke its function's live alias only (what its integration names), others the function.
        expect(onFunction, routeKey(route)).toHaveLength(isCanaried(route.handler) ? 0 : 1);
        expect(onAlias, routeKey(route)).toHaveLength(isCanaried(route.handler) ? 1 : 0);
        const permissions = [...onFunction, ...onAlias];
        const { Properties: p } = permissions[0]!;
        expect(p.Action).toBe('lambda:InvokeFunction');
        expect(p.Principal).toBe('apigateway.amazonaws.com');
        const arn = p.SourceArn['Fn::Join'][1] as unknown[];
        expect(arn).toContainEqual({ Ref: apiId });
        if (!isConsolePage(route)) {
          expect(arn.at(-1)).toBe(`/*/*${route.path}`);
          continue;
        }
        // A console function: one permission, its pages' method and the start of their paths (any stage).
        const glob = new RegExp(
          `^${String(arn.at(-1))
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')}$`,
        );
        expect(String(arn.at(-1)), routeKey(route)).toMatch(/^\/\*\/(GET|POST)\/console\/?\*$/);
        expect(`/$default/${route.method}${route.path}`, routeKey(route)).toMatch(glob);
        for (const api of apiRoutes) expect(`/$default/${api.method}${api.path}`).not.toMatch(glob);
      }
    });

    // New routes add nothing to the stack: a full stack of whole routes (7 resources and 2 outputs
    // each) keeps the headroom too, whose parameters are the stack's resources its functions use.
    it('fits a full nested stack of whole routes, and a full one of kept routes', () => {
      expect(7 * WHOLE_ROUTES_PER_NESTED_STACK).toBeLessThanOrEqual(0.7 * 500);
      expect(2 * WHOLE_ROUTES_PER_NESTED_STACK).toBeLessThanOrEqual(0.7 * 200);
      const [resources, parameters, outputs] = counts(nested[0]!);
      // The first holds the trigger's two routes, and their canaries.
      expect([resources, outputs]).toEqual([5 * ROUTES_PER_NESTED_STACK + RESOURCES_PER_CANARY * canaried, 2 * ROUTES_PER_NESTED_STACK]);
      expect(resources).toBeLessThanOrEqual(0.7 * 500);
      expect(parameters).toBeLessThanOrEqual(0.7 * 200);
    });
  });

  describe('tracing', () => {
    const xray = (b: Built) =>
      [b.template, b.functions, b.auditEvents]
        .flatMap((t) => Object.values(t.findResources('AWS::IAM::Policy') as Record<string, Resource>))
        .flatMap((p) => list<Statement>(p.Properties.PolicyDocument.Statement))
        .filter((s) => list(s.Action).some((a) => a.startsWith('xray:')));

    it('is off by default: no active tracing, no X-Ray grant', () => {
      expect(xray(built)).toEqual([]);
    });

    it('is active on every function with the tracing setting', () => {
      const traced = build({ tracing: true });
      for (const [, fn] of functionsOf(traced)) expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(xray(traced)).toHaveLength(functionsOf(traced).length);
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
      // One per function (the route table's, fallback, two workers, two sweeps) and the API's access logs.
      expect(groups.length).toBe(specs.size + 7);
      for (const [, g] of groups) expect(g.Properties.RetentionInDays).toBeGreaterThan(0);
    });
  });
});

describe("the console's pages in the stack", () => {
  const pages = (routes as readonly Route[]).filter(isConsolePage);
  const apiRoutes = [template, routeFunctions].flatMap((t) =>
    Object.values(t.findResources('AWS::ApiGatewayV2::Route') as Record<string, Resource>),
  );

  it('are routes of the API, each on the console function its route names (by what it may touch), with no authorizer of the gateway', () => {
    expect(pages.map(routeKey)).toEqual(
      expect.arrayContaining([
        'GET /console',
        'GET /console/login',
        'POST /console/login',
        'POST /console/logout',
        'GET /console/assets/{name}',
      ]),
    );
    for (const r of pages) {
      const mounted = apiRoutes.filter((a) => a.Properties.RouteKey === routeKey(r));
      expect(mounted, routeKey(r)).toHaveLength(1);
      expect([undefined, 'NONE'], routeKey(r)).toContain(mounted[0]?.Properties.AuthorizationType);
      const fnId = routeFunctionId(template, routeFunctions, routeKey(r));
      expect(Object.values(CONSOLE_FUNCTIONS)).toContain(r.handler);
      expect(fnId, routeKey(r)).toMatch(
        new RegExp(
          `^${r.handler === CONSOLE_FUNCTIONS.read ? 'HttpConsoleRead' : r.handler === CONSOLE_FUNCTIONS.change ? 'HttpConsoleChange' : 'HttpConsoleSecrets'}`,
        ),
      );
      // Every GET page is a read page; the secrets key is used by the one function of the forms that handle secrets.
      expect(r.handler === CONSOLE_FUNCTIONS.read, routeKey(r)).toBe(r.method === 'GET');
      expect(r.handler === CONSOLE_FUNCTIONS.secrets, routeKey(r)).toBe(r.grants.some((g) => g.startsWith('secrets:')));
    }
  });

  it('gives each console function the least privilege its pages need together: the read pages write nothing but the failed sign-in counter', () => {
    const actionsOf = (handler: string) => {
      const page = pages.find((r) => r.handler === handler) as Route;
      return policyOf(page)
        .flatMap((s) => list(s.Action))
        .filter((a) => !a.startsWith('logs:'));
    };
    const read = actionsOf(CONSOLE_FUNCTIONS.read);
    expect(read.filter((a) => /^dynamodb:(Put|Delete|BatchWrite|ConditionCheck)|^(sqs|kms|ses|scheduler):|^s3:Put/.test(a))).toEqual([]);
    expect(read).toContain('s3:GetObject');
    const change = actionsOf(CONSOLE_FUNCTIONS.change);
    expect(change.filter((a) => /^(kms|ses):/.test(a))).toEqual([]);
    // A webhook request's replay (as the API's, as the trigger): a large payload read back and kept in the bucket.
    expect([...new Set(change.filter((a) => a.startsWith('s3:')))].sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    expect(change).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'sqs:SendMessage', 'scheduler:CreateSchedule']));
    const secrets = actionsOf(CONSOLE_FUNCTIONS.secrets);
    expect(secrets).toEqual(expect.arrayContaining(['kms:GenerateDataKey', 'kms:Decrypt']));
    expect(secrets.filter((a) => /^(sqs|s3|scheduler):/.test(a))).toEqual([]);
  });

  it('cannot be reached with an API key: signed in by the session cookie or not at all, and never metered as a key route is', () => {
    for (const r of pages) {
      expect(['console', 'none'], routeKey(r)).toContain(r.auth.kind);
      // An API-key route's function gets metering's UpdateItem; a read page's function has reads alone
      // (and the failed-authentication counter of an address).
      if (r.handler === CONSOLE_FUNCTIONS.read) expect(tableActions(r), routeKey(r)).toEqual([...TABLE_ACTIONS.read].sort());
      expect(keyedActions(r), routeKey(r)).toEqual([AUTHFAIL]);
    }
  });

  it('serves the assets with no data access (no AWS call: here under no grant at all), cacheable for a year', async () => {
    const assets = pages.find((r) => r.path === '/console/assets/{name}') as Route;
    expect(assets.grants).toEqual([]);
    // Through the read pages' function, as deployed, with an identity that may call nothing.
    const { handler } = await import('../../functions/http/console/read.ts');
    const name = ASSET['pico.css'].split('/').pop() as string;
    const event = { ...apiEvent({ path: `/console/assets/${name}`, params: { name } }), routeKey: routeKey(assets) };
    const res = (await runAs(identityOf('no-grants', []), () => handler(event, lambdaContext()))) as {
      statusCode: number;
      headers: Record<string, string>;
    };
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });
});
