import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes.ts';
import { defaultThrottles, type FlowgateStackProps } from '../../infra/settings.ts';
import { FlowgateStack } from '../../infra/stack.ts';
import { PLAN_RATE_LIMITS } from '../../shared/config.ts';
import { type Route, routeKey } from '../../shared/http/route.ts';
import { ownFunctions, parameterValue, templatesOf } from '../support/template.ts';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
type Statement = { Effect: string; Action: string | string[]; Resource: unknown };

const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));
const CERT = 'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000';
const DOMAIN = { domainName: 'api.example.com', certificateArn: CERT };

function build(props: Partial<FlowgateStackProps> = {}) {
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new FlowgateStack(app, 'flowgate-edge', { stage: 'edge', ...props });
  return templatesOf(stack);
}
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);
const all = (t: Template, type: string) => Object.entries(t.findResources(type) as Record<string, Resource>);
const stageOf = (t: Template) => all(t, 'AWS::ApiGatewayV2::Stage')[0]![1];
const apiOf = (t: Template) => all(t, 'AWS::ApiGatewayV2::Api')[0]![1].Properties;
const byClass = (cls: Route['throttle']) => (routes as readonly Route[]).filter((r) => r.throttle === cls).map(routeKey);

// Synthesized at load time, like stack.test.ts: a synth takes seconds while the emulators run.
const plain = build();
const guarded = build({
  ...DOMAIN,
  disableExecuteApiEndpoint: true,
  corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
  rateLimits: '{"enterprise":60000}',
  throttles: { login: { rateLimit: 2, burstLimit: 4 } },
});

describe('edge throttles', () => {
  it('keep the stage default for routes without a class', () => {
    expect(stageOf(plain.template).Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
  });

  it('give login a low limit of its own and the trigger and approval routes one sized for the largest plan', () => {
    const settings = stageOf(plain.template).Properties.RouteSettings as Record<string, unknown>;
    const planRate = Math.ceil(Math.max(...Object.values(PLAN_RATE_LIMITS)) / 60);
    expect(byClass('login')).toEqual(['POST /api/auth/login', 'POST /console/login']);
    expect(byClass('trigger')).toEqual(['POST /api/webhooks/{webhookId}/trigger', 'POST /api/webhook-trigger/{webhookId}']);
    expect(byClass('approval').length).toBeGreaterThanOrEqual(6);
    expect(settings['POST /api/auth/login']).toEqual({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 });
    for (const key of [...byClass('trigger'), ...byClass('approval')]) {
      expect(settings[key], key).toEqual({ ThrottlingRateLimit: planRate, ThrottlingBurstLimit: 2 * planRate });
    }
    // Only the classed routes have settings of their own, and each names a route that exists.
    expect(Object.keys(settings).sort()).toEqual([...byClass('login'), ...byClass('trigger'), ...byClass('approval')].sort());
    for (const key of Object.keys(settings)) plain.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: key });
  });

  it('follow the plan limits and the throttles setting', () => {
    const settings = stageOf(guarded.template).Properties.RouteSettings as Record<string, unknown>;
    expect(settings['POST /api/webhooks/{webhookId}/trigger']).toEqual({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
    expect(settings['POST /api/auth/login']).toEqual({ ThrottlingRateLimit: 2, ThrottlingBurstLimit: 4 });
    expect(defaultThrottles({ enterprise: 60_000 }).trigger).toEqual({ rateLimit: 1000, burstLimit: 2000 });
  });

  it('refuse a limit that is not a positive whole number', () => {
    expect(() => build({ throttles: { trigger: { rateLimit: 0, burstLimit: 10 } } })).toThrow(/throttles.trigger needs positive whole/);
  });
});

describe('execute-api endpoint', () => {
  it('stays on by default, and ApiUrl is it', () => {
    expect(apiOf(plain.template).DisableExecuteApiEndpoint).toBe(false);
    const [apiId] = all(plain.template, 'AWS::ApiGatewayV2::Api')[0]!;
    plain.template.hasOutput('ApiUrl', { Value: { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] } });
  });

  it('can be turned off with a custom domain, which becomes ApiUrl', () => {
    expect(apiOf(guarded.template).DisableExecuteApiEndpoint).toBe(true);
    guarded.template.hasOutput('ApiUrl', { Value: 'https://api.example.com' });
  });

  it('cannot be turned off without a custom domain (nothing would reach the API)', () => {
    expect(() => build({ disableExecuteApiEndpoint: true })).toThrow(/disableExecuteApiEndpoint needs a custom domain/);
  });
});

describe('CORS', () => {
  it('is off by default', () => {
    expect(apiOf(plain.template).CorsConfiguration).toBeUndefined();
  });

  it('lets API Gateway answer preflights for the allowed origins, with the headers the API reads and sends', () => {
    const cors = apiOf(guarded.template).CorsConfiguration;
    expect(cors.AllowOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
    expect(cors.AllowMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'DELETE']));
    expect(cors.AllowHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-api-key', 'idempotency-key']));
    expect(cors.ExposeHeaders).toEqual(expect.arrayContaining(['x-request-id', 'x-ratelimit-remaining', 'retry-after']));
    expect(cors.AllowCredentials).toBeUndefined();
    expect(cors.MaxAge).toBe(3600);
  });

  it('refuses what is not an origin', () => {
    expect(() => build({ corsOrigins: ['https://app.example.com/path'] })).toThrow(/is not an origin/);
    expect(() => build({ corsOrigins: ['app.example.com'] })).toThrow(/is not an origin/);
  });
});

/**
 * The stack's signing secrets: each in no function environment as a value, readable (GetSecretValue on
 * that secret only) by exactly the functions that need it, which get its ARN. The cursor key: the
 * routes that page. The reviewers' link key: the link pages and the notifications worker that sends links.
 */
const SECRETS = [
  {
    name: 'cursor secret',
    logicalId: 'CursorSecret',
    env: 'CURSOR_SECRET_ARN',
    value: 'CURSOR_SECRET',
    handlers: [
      ...new Set((routes as readonly Route[]).filter((r) => r.query !== undefined && 'cursor' in r.query.shape).map((r) => r.handler)),
    ],
    expected: [
      'http/audit/list',
      // The console's pages that page are all read pages, served by one function.
      'http/console/read',
      'http/schedules/events',
      'http/v1/approvals/deliveries',
      'http/v1/approvals/list',
      'http/v1/executions/deliveries',
      'http/v1/executions/events',
      'http/v1/executions/list',
      'http/v1/workflows/list',
      // The inbound log's pages (issue 47).
      'http/webhooks/requests',
      'http/workflows/list',
      'http/workflows/versions',
    ],
  },
  {
    name: "reviewers' link secret",
    logicalId: 'ReviewLinkSecret',
    env: 'REVIEW_LINK_SECRET_ARN',
    value: 'REVIEW_LINK_KEY_FILE',
    handlers: [
      ...(routes as readonly Route[]).filter((r) => r.grants.some((g) => g === 'links:sign')).map((r) => r.handler),
      'worker/notify',
    ],
    expected: ['http/reviews/decide', 'http/reviews/head', 'http/reviews/page', 'worker/notify'],
  },
];

describe.each(SECRETS)('$name', ({ logicalId, env, value, handlers, expected }) => {
  const { template, functions } = plain;
  const [secretId] = all(template, 'AWS::SecretsManager::Secret').find(([id]) => id.startsWith(logicalId))!;
  /** The secret's ARN as a template says it: itself in the main one, a parameter of the nested one. */
  const isSecret = (t: Template, arn: unknown) =>
    JSON.stringify(arn) === JSON.stringify({ Ref: secretId }) ||
    (t === functions && JSON.stringify(parameterValue(template, (arn as { Ref: string }).Ref)) === JSON.stringify({ Ref: secretId }));
  const secretStatements = (t: Template) =>
    all(t, 'AWS::IAM::Policy').flatMap(([, p]) =>
      list<Statement>(p.Properties.PolicyDocument.Statement)
        .filter((s) => list(s.Action).some((a) => a.startsWith('secretsmanager:')) && isSecret(t, s.Resource))
        .map((s) => ({ roles: p.Properties.Roles as { Ref: string }[], statement: s })),
    );

  it('is in no function environment and nowhere in the templates as a value', () => {
    for (const t of [template, functions]) {
      expect(JSON.stringify(t.toJSON())).not.toMatch(/resolve:secretsmanager/);
      for (const [, fn] of ownFunctions(t)) expect(fn.Properties.Environment.Variables).not.toHaveProperty(value);
    }
  });

  it('is readable (GetSecretValue on that secret only) by exactly the functions that need it, which get its ARN', () => {
    expect([...handlers].sort()).toEqual(expected);
    let seen = 0;
    for (const t of [template, functions]) {
      const readers = secretStatements(t);
      const holders = ownFunctions(t).filter(([, fn]) => fn.Properties.Environment.Variables[env]);
      expect(readers).toHaveLength(holders.length);
      for (const [, fn] of holders) {
        const arn = fn.Properties.Environment.Variables[env];
        expect(isSecret(t, arn)).toBe(true);
        const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
        const role = all(t, 'AWS::IAM::Role').find(([id]) => id === roleId)![1];
        expect(handlers.map((h) => `Flowgate function ${h}`)).toContain(role.Properties.Description);
        const own = readers.filter((r) => r.roles.some((ref) => ref.Ref === roleId)).map((r) => r.statement);
        expect(own).toEqual([{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: arn }]);
        seen++;
      }
    }
    expect(seen).toBe(handlers.length);
  });
});
