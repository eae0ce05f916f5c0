import { Duration } from 'aws-cdk-lib';
import { type CfnStage, CorsHttpMethod, type CorsPreflightOptions } from 'aws-cdk-lib/aws-apigatewayv2';
import { routes } from '../../functions/routes.ts';
import { type Route, routeKey } from '../../shared/http/route.ts';
import { defaultThrottles, THROTTLE_CLASSES, type Throttle, type ThrottleClass } from '../settings.ts';

/** Request headers a browser may send, and response headers it may read (CORS). */
const CORS_HEADERS = {
  allow: ['authorization', 'content-type', 'x-api-key', 'idempotency-key', 'x-webhook-signature'],
  expose: [
    'x-request-id',
    'x-ratelimit-limit',
    'x-ratelimit-remaining',
    'x-ratelimit-reset',
    'ratelimit',
    'ratelimit-policy',
    'retry-after',
    'location',
    'idempotent-replayed',
  ],
};

/** Preflights answered by API Gateway for the allowed origins; with none, no CORS at all. */
export function corsPreflight(origins: readonly string[]): CorsPreflightOptions | undefined {
  if (origins.length === 0) return undefined;
  for (const o of origins) {
    if (!URL.canParse(o) || new URL(o).origin !== o) throw new Error(`corsOrigins: ${o} is not an origin like https://app.example.com`);
  }
  return {
    allowOrigins: [...origins],
    allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.HEAD, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.DELETE],
    allowHeaders: CORS_HEADERS.allow,
    exposeHeaders: CORS_HEADERS.expose,
    maxAge: Duration.hours(1),
  };
}

/**
 * The stage's throttles: its default for every route without a class, and each classed route of the
 * route table its class's (settings over `defaultThrottles`, which follow the plans' rate limits).
 */
export function throttleRoutes(stage: CfnStage, settings: { rateLimits?: string; throttles?: Partial<Record<ThrottleClass, Throttle>> }) {
  const throttles = { ...defaultThrottles(settings.rateLimits ? JSON.parse(settings.rateLimits) : {}), ...settings.throttles };
  for (const cls of THROTTLE_CLASSES) {
    const t = throttles[cls];
    if (!(Number.isInteger(t.rateLimit) && t.rateLimit > 0 && Number.isInteger(t.burstLimit) && t.burstLimit > 0)) {
      throw new Error(`throttles.${cls} needs positive whole rateLimit and burstLimit, got ${JSON.stringify(t)}`);
    }
  }
  stage.defaultRouteSettings = { throttlingRateLimit: throttles.default.rateLimit, throttlingBurstLimit: throttles.default.burstLimit };
  // Untyped in the L1: CloudFormation's own casing.
  stage.routeSettings = Object.fromEntries(
    (routes as readonly Route[]).flatMap((r) => {
      const t = r.throttle && throttles[r.throttle];
      return t ? [[routeKey(r), { ThrottlingRateLimit: t.rateLimit, ThrottlingBurstLimit: t.burstLimit }]] : [];
    }),
  );
}
