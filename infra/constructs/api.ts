import { NestedStack, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  ApiMapping,
  CfnStage,
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  type HttpRouteIntegrationBindOptions,
  HttpRouteKey,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { routes } from '../../functions/routes.ts';
import { isConsolePage, type Route, routeKey } from '../../shared/http/route.ts';
import type { FlowgateStackProps } from '../settings.ts';
import { corsPreflight, throttleRoutes } from './edge.ts';
import type { Functions } from './functions.ts';
import { routeFunctions } from '../route-functions.ts';
import { isCanaried, type Releases } from './releases.ts';
import { nestedStackOf, PAGE_ROUTES, ROUTES_IN_STACK } from './placement.ts';
import { type Bindable, idOf, type RouteFunction } from './route-function.ts';

/**
 * Routes per nested stack when their API route and integration are in the stack (5 resources and 2
 * outputs each): what the first two nested stacks were sized for.
 */
export const ROUTES_PER_NESTED_STACK = 60;
/** Whole routes per nested stack: 7 resources and 2 outputs each, 350 of CloudFormation's 500 resources. */
export const WHOLE_ROUTES_PER_NESTED_STACK = 50;

/**
 * Where a route's API route and integration are: in the stack itself (`whole` false), or whole in nested
 * stack `n` under construct id `id` (infra/constructs/placement.ts). An API route's function serves it
 * alone and is in the same nested stack; a console page's function serves many, and each page is pinned.
 */
export function routeStackOf(route: Pick<Route, 'method' | 'path' | 'handler'>): { n: number; whole: boolean; id: string } {
  const key = routeKey(route);
  const page = isConsolePage(route);
  if (ROUTES_IN_STACK.has(key)) return { n: nestedStackOf(route.handler), whole: false, id: '' };
  if (!page) return { n: nestedStackOf(route.handler), whole: true, id: `${idOf(route.handler)}Route` };
  const pinned = PAGE_ROUTES[key];
  if (!pinned) throw new Error(`${key}: a console page's API route is placed by PAGE_ROUTES (infra/constructs/placement.ts): add it there`);
  return { n: pinned[0], whole: true, id: pinned[1] };
}

/** The longest common start of `paths`: a function of several routes may be invoked by API Gateway for those paths only. */
const commonStart = (paths: string[]) =>
  paths.reduce((a, b) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return a.slice(0, i);
  });

/**
 * Only fields that cannot carry a secret: the route key and path, never the query string (API keys
 * may arrive as `api_key`) nor any header.
 */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  routeKey: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
});

/**
 * A route's Lambda integration whose invoke permission lives beside the function (in its route
 * functions stack) rather than beside the route: CDK's own puts it in the route's scope, a
 * resource a route in the stack. Scoped to the route as CDK's is (the API, any stage and method, the
 * route's path); the API's id reaches the nested stack as one of its parameters.
 */
class RouteIntegration extends HttpLambdaIntegration {
  readonly #fn: IFunction;
  constructor(id: string, fn: IFunction) {
    super(id, fn);
    this.#fn = fn;
  }
  protected override completeBind({ route }: HttpRouteIntegrationBindOptions): void {
    this.#fn.addPermission('ApiInvoke', {
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(this.#fn).formatArn({
        service: 'execute-api',
        resource: route.httpApi.apiId,
        resourceName: `*/*${route.path ?? ''}`,
      }),
    });
  }
}

/** A console page's integration: its function's one invoke permission covers all of its pages (`addApi`). */
class PageIntegration extends HttpLambdaIntegration {
  protected override completeBind(): void {}
}

const AUTHORIZED_IN_FUNCTIONS = {
  id: 'AwsSolutions-APIG4',
  reason:
    'Authorization is done in the functions: API keys, sessions and HMAC (per-route auth in the route table); health, OpenAPI and login are public by design',
};

/** The custom domain of the API (props `domainName` and `certificateArn`, both or neither), in the stack itself. */
export function addCustomDomain(stack: Stack, props: FlowgateStackProps): DomainName | undefined {
  if (!props.domainName && !props.certificateArn) return undefined;
  if (!props.domainName || !props.certificateArn) throw new Error('domainName and certificateArn go together');
  return new DomainName(stack, 'Domain', {
    domainName: props.domainName,
    certificate: Certificate.fromCertificateArn(stack, 'Certificate', props.certificateArn),
    securityPolicy: SecurityPolicy.TLS_1_2,
  });
}

export type ApiProps = {
  props: FlowgateStackProps;
  functions: Functions;
  resources: Bindable;
  cursorSecret: ISecret;
  customDomain: DomainName | undefined;
  removalPolicy: RemovalPolicy;
  /** The canaries: the trigger's routes invoke their function's `live` alias. */
  releases: Releases;
};

/**
 * The HTTP API, its fallback function and the route table's functions (one per API route, three for
 * the console's pages: infra/route-functions.ts), each bound to what its routes grant; the default stage's throttles and access logs; the custom domain's mapping.
 * All in the stack itself or its nested stacks of route functions, so the logical ids stay those of
 * the one-file stack.
 */
export function addApi(stack: Stack, { props, functions, resources, cursorSecret, customDomain, removalPolicy, releases }: ApiProps) {
  const fallback = functions.create('http/fallback');
  const api = new HttpApi(stack, 'Api', {
    apiName: `flowgate-${props.stage}`,
    defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
    disableExecuteApiEndpoint: props.disableExecuteApiEndpoint ?? false,
    corsPreflight: corsPreflight(props.corsOrigins ?? []),
  });
  Validations.of(api).acknowledge(AUTHORIZED_IN_FUNCTIONS);
  // Room to grow: a route is 7 resources (function, role, policy, log group, permission, route,
  // integration) against CloudFormation's 500 a template. The functions are in nested stacks of route
  // functions, each where infra/constructs/placement.ts pins it. The routes of ROUTES_IN_STACK have
  // their API route and integration here, so a stack deployed before the split upgrades in place (a
  // route key cannot be created twice on one API; a function or a permission can move: the new one is
  // created, the old deleted); every other route is whole in a nested stack: an API route in its
  // function's, a console page where PAGE_ROUTES pins it (its function is shared). Each function
  // also gives its nested stack two outputs (its ARN and name, for the dashboard and alarms) against
  // CloudFormation's 200. A deployed route never changes stack, wherever a route is added to the table.
  const routeStacks = new Map<number, NestedStack>();
  const routeStack = (n: number) => {
    let nested = routeStacks.get(n);
    if (!nested) {
      nested = new NestedStack(stack, n === 1 ? 'RouteFunctions' : `RouteFunctions${n}`, {
        description: `Flowgate route functions${n === 1 ? '' : ` ${n}`} (${props.stage})`,
      });
      routeStacks.set(n, nested);
    }
    return nested;
  };
  const wholeRouteStacks = new Set<NestedStack>();
  const specs = routeFunctions(routes);
  const created = new Map<string, RouteFunction>();
  for (const spec of specs.values()) {
    const settings = { memoryMb: spec.memoryMb, timeoutSeconds: spec.timeoutSeconds };
    const fn = functions.create(spec.handler, settings, routeStack(nestedStackOf(spec.handler))).bind(resources, spec.grants, {
      cursorSecret: cursorSecret.secretArn,
    });
    if (spec.pages) fn.addEnvironment('CURSOR_SECRET_ARN', cursorSecret.secretArn);
    functions.group((spec.routes[0] as Route).tag, fn);
    // A function of several routes (a console function) may be invoked by the API for their paths, one
    // permission (a function's resource policy holds 20 KB: not one statement a page); one route's, for its own.
    if (spec.routes.length > 1) {
      const methods = new Set(spec.routes.map((r) => r.method));
      fn.addPermission('ApiInvoke', {
        principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: Stack.of(fn).formatArn({
          service: 'execute-api',
          resource: api.apiId,
          resourceName: `*/${methods.size === 1 ? [...methods][0] : '*'}${commonStart(spec.routes.map((r) => r.path))}*`,
        }),
      });
    }
    created.set(spec.handler, fn);
  }
  for (const route of routes as readonly Route[]) {
    const { n, whole, id } = routeStackOf(route);
    const handler = created.get(route.handler) as RouteFunction;
    // A canaried route invokes its function's `live` alias (and only the alias may be invoked by the API).
    const target = isCanaried(route.handler) ? releases.canary(handler) : handler;
    const integrationId = `${idOf(route.handler)}Integration`;
    const shared = (specs.get(route.handler)?.routes.length ?? 1) > 1;
    const integration = shared ? new PageIntegration(integrationId, target) : new RouteIntegration(integrationId, target);
    if (whole) {
      const scope = routeStack(n);
      const apiRoute = new HttpRoute(scope, id, {
        httpApi: api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration,
      });
      Validations.of(apiRoute).acknowledge(AUTHORIZED_IN_FUNCTIONS);
      wholeRouteStacks.add(scope);
    } else {
      api.addRoutes({ path: route.path, methods: [HttpMethod[route.method]], integration });
    }
  }
  // The stage's per-route throttles name routes that may be in those stacks: they exist first.
  const { stage, accessLogs } = configureDefaultStage(stack, api, props, removalPolicy);
  for (const nested of wholeRouteStacks) stage.node.addDependency(nested);
  if (customDomain) new ApiMapping(stack, 'ApiMapping', { api, domainName: customDomain });
  return { api, fallback, accessLogs };
}

/**
 * Throttling (the stage's default and per route) and access logs; the L2 HttpApi exposes neither
 * for the stage it creates itself.
 */
function configureDefaultStage(stack: Stack, api: HttpApi, props: FlowgateStackProps, removalPolicy: RemovalPolicy) {
  const stage = api.defaultStage?.node.defaultChild;
  if (!(stage instanceof CfnStage)) throw new Error('HttpApi has no default stage');
  const accessLogs = new logs.LogGroup(stack, 'ApiAccessLogs', {
    retention: logs.RetentionDays.ONE_MONTH,
    removalPolicy,
  });
  stage.accessLogSettings = { destinationArn: accessLogs.logGroupArn, format: ACCESS_LOG_FORMAT };
  throttleRoutes(stage, props);
  return { stage, accessLogs };
}
