import type { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '../../shared/metric-names.ts';
import { DEFAULTS, type FlowgateStackProps, heavyAccountRequestsPerMinute } from '../settings.ts';
import type { FunctionGroup } from './dashboard.ts';
import { idOf, RouteFunction } from './route-function.ts';

/** What every function's settings are made of, beyond the stack's props. */
export type FunctionSettings = {
  /** Base of the links the service builds: resolved once the API exists. */
  publicBaseUrl: string;
  retentionDays: number;
  succeededWebhookRetentionDays: number;
  auditRetentionDays: number;
  retryLimit: number;
  /** Of the functions' log groups. */
  removalPolicy: RemovalPolicy;
};

/**
 * How the stack makes its functions: the one environment every function gets, the house settings
 * (tracing, reserved concurrency, log retention), and the dashboard's function groups (the route
 * table's tags, the workers, the sweeps, the fallback) in the order they were added.
 */
export class Functions {
  /** The settings every function gets (also what the release digest of the startup sweep covers). */
  readonly environment: Record<string, string>;
  private readonly stack: Stack;
  private readonly props: FlowgateStackProps;
  private readonly removalPolicy: RemovalPolicy;
  private readonly groups = new Map<string, IFunction[]>();

  constructor(stack: Stack, props: FlowgateStackProps, settings: FunctionSettings) {
    this.stack = stack;
    this.props = props;
    this.removalPolicy = settings.removalPolicy;
    this.environment = {
      POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
      // Powertools Metrics' default namespace: the one the dashboard reads.
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      TRUSTED_PROXIES: props.trustedProxies ?? '',
      PUBLIC_BASE_URL: settings.publicBaseUrl,
      ...(props.rateLimits && { RATE_LIMITS: props.rateLimits }),
      ...(props.httpStepAllowlist && { HTTP_STEP_ALLOWLIST: props.httpStepAllowlist }),
      RETENTION_DAYS: String(settings.retentionDays),
      SUCCEEDED_WEBHOOK_RETENTION_DAYS: String(settings.succeededWebhookRetentionDays),
      AUDIT_RETENTION_DAYS: String(settings.auditRetentionDays),
      AUTH_FAILURE_LIMIT: String(props.authFailureLimit ?? DEFAULTS.authFailureLimit),
      ...(props.requestLogSample !== undefined && { REQUEST_LOG_SAMPLE: String(props.requestLogSample) }),
      RETRY_LIMIT: String(settings.retryLimit),
      // Which accounts' new runs go to the heavy lane (shared/engine/lanes.ts): read by the triggers.
      HEAVY_ACCOUNT_REQUESTS_PER_MINUTE: String(heavyAccountRequestsPerMinute(props)),
    };
  }

  /** The function of a handler module under functions/, in the stack itself unless `scope` says where. */
  create(handler: string, settings: { memoryMb?: number; timeoutSeconds?: number } = {}, scope: Construct = this.stack): RouteFunction {
    return new RouteFunction(scope, idOf(handler), {
      handler,
      ...settings,
      environment: this.environment,
      tracing: this.props.tracing ?? false,
      logRemovalPolicy: this.removalPolicy,
      ...(this.props.reservedConcurrency !== undefined && { reservedConcurrency: this.props.reservedConcurrency }),
    });
  }

  /** Shows `f` on the dashboard's Lambda graphs as part of the line `name`. */
  group(name: string, f: IFunction) {
    this.groups.set(name, [...(this.groups.get(name) ?? []), f]);
  }

  /** Every function grouped so far. */
  all(): IFunction[] {
    return [...this.groups.values()].flat();
  }

  /** The dashboard's groups, in the order their first function was added. */
  dashboardGroups(): FunctionGroup[] {
    return [...this.groups].map(([name, functions]) => ({ name, functions }));
  }
}
