// The CDK app: `npx cdk deploy -c stage=prod -c rateLimits='{"pro":1200}' ...` (all context optional;
// the table in docs/deploying.md "Deploying to AWS" lists every key).
import { App, Validations } from 'aws-cdk-lib';
import { nagPacks } from './nag.ts';
import { type PerPart, TABLE_PARTS, THROTTLE_CLASSES, type Throttle, type ThrottleClass } from './settings.ts';
import { FlowgateStack } from './stack.ts';

const app = new App();

/** The stack's workflows: a folder (`workflowsDir`) applied to an account (`workflowsAccount`), both or neither. */
function workflows() {
  const dir = text('workflowsDir');
  const account = text('workflowsAccount');
  if (!dir && !account) return {};
  if (!dir || !account)
    throw new Error('Context workflowsDir and workflowsAccount go together: the folder and the account it is applied to');
  return { workflows: { dir, account, owner: text('workflowsOwner'), prune: bool('workflowsPrune') } };
}
// cdk-nag at every synth: an unacknowledged finding fails it (acknowledgements: Validations.of(...)).
Validations.of(app).addPlugins(...nagPacks(app));

/** A context value as a string; cdk.json may hold JSON values where `-c` gives strings. */
function text(key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.join(',');
  return JSON.stringify(value);
}

function bool(key: string): boolean | undefined {
  const value = text(key);
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new Error(`Context ${key} must be true or false, got ${value}`);
}

function int(key: string): number | undefined {
  const value = text(key);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`Context ${key} must be a non-negative integer, got ${value}`);
  return n;
}

function share(key: string): number | undefined {
  const value = text(key);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new Error(`Context ${key} must be a number from 0 to 1, got ${value}`);
  return n;
}

function restartSweep(): 'orphaned' | 'all' | undefined {
  const value = text('restartSweep');
  if (value === undefined || value === 'orphaned' || value === 'all') return value;
  throw new Error(`Context restartSweep must be "orphaned" or "all", got ${value}`);
}

/** Fail at synth, not at the first cold start, when RATE_LIMITS would not parse. */
function rateLimits(): string | undefined {
  const value = text('rateLimits');
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`Context rateLimits must be JSON like {"pro": 1200}, got ${value}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`Context rateLimits must be a JSON object like {"pro": 1200}, got ${value}`);
  }
  return value;
}

/** `{"login": {"rateLimit": 5, "burstLimit": 10}, ...}`: the classes of infra/settings.ts only. */
function throttles(): Partial<Record<ThrottleClass, Throttle>> | undefined {
  const value = text('throttles');
  if (value === undefined) return undefined;
  const usage = `Context throttles must be JSON like {"login":{"rateLimit":5,"burstLimit":10}} with classes ${THROTTLE_CLASSES.join(', ')}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`${usage}, got ${value}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${usage}, got ${value}`);
  for (const [cls, t] of Object.entries(parsed)) {
    const valid = (n: unknown) => Number.isInteger(n) && (n as number) > 0;
    if (!THROTTLE_CLASSES.includes(cls as ThrottleClass) || !valid(t?.rateLimit) || !valid(t?.burstLimit)) {
      throw new Error(`${usage}, got ${value}`);
    }
  }
  return parsed as Partial<Record<ThrottleClass, Throttle>>;
}

/** `{"table":{"read":15000,"write":20000},"GSI2":{"write":8000}}`: JSON of the table's parts (the values are checked by the stack). */
function perPart(key: string): PerPart | undefined {
  const value = text(key);
  if (value === undefined) return undefined;
  const usage = `Context ${key} must be JSON like {"table":{"read":15000,"write":20000}} with parts ${TABLE_PARTS.join(', ')}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error(`${usage}, got ${value}`);
  }
  const isObject = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObject(parsed) || !Object.values(parsed as object).every(isObject)) throw new Error(`${usage}, got ${value}`);
  return parsed as PerPart;
}

function list(key: string): string[] | undefined {
  const value = text(key);
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

function domain(): { domainName?: string; certificateArn?: string } {
  const domainName = text('domainName');
  const certificateArn = text('certificateArn');
  if (!domainName && !certificateArn) return {};
  if (!domainName || !certificateArn) {
    throw new Error('Context domainName and certificateArn go together (an ACM certificate of the stack region for the name)');
  }
  if (!/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/.+$/.test(certificateArn)) {
    throw new Error(`Context certificateArn must be an ACM certificate ARN, got ${certificateArn}`);
  }
  return { domainName, certificateArn };
}

function alarms(): { alarmEmail?: string; alarmTopicArn?: string } {
  const alarmEmail = text('alarmEmail');
  const alarmTopicArn = text('alarmTopicArn');
  if (alarmEmail !== undefined && !/^[^@\s]+@[^@\s]+$/.test(alarmEmail)) {
    throw new Error(`Context alarmEmail must be an email address, got ${alarmEmail}`);
  }
  if (alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:.+$/.test(alarmTopicArn)) {
    throw new Error(`Context alarmTopicArn must be an SNS topic ARN, got ${alarmTopicArn}`);
  }
  return { alarmEmail, alarmTopicArn };
}

// AWS WAF web ACLs attach to REST APIs, CloudFront, ALBs and a few others, not to HTTP APIs: a
// CfnWebACLAssociation on this API's stage would fail at deploy. Refuse instead of ignoring it.
if (text('webAclArn') !== undefined) {
  throw new Error(
    'Context webAclArn: AWS WAF cannot be associated with an API Gateway HTTP API. Put a CloudFront distribution with the web ACL in front of the API (docs/deploying.md, "Deploying to AWS").',
  );
}

const stage = text('stage') ?? 'dev';

new FlowgateStack(app, `flowgate-${stage}`, {
  stage,
  description: `Flowgate workflow automation service (${stage})`,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  deletionProtection: bool('deletionProtection'),
  rateLimits: rateLimits(),
  trustedProxies: text('trustedProxies'),
  publicBaseUrl: text('publicBaseUrl'),
  httpStepAllowlist: text('httpStepAllowlist'),
  secretsKeyArn: text('secretsKeyArn'),
  sesIdentity: text('sesIdentity'),
  reservedConcurrency: int('reservedConcurrency'),
  runsWorkerConcurrency: int('runsWorkerConcurrency'),
  heavyRunsWorkerConcurrency: int('heavyRunsWorkerConcurrency'),
  heavyAccountRequestsPerMinute: int('heavyAccountRequestsPerMinute'),
  notifyWorkerConcurrency: int('notifyWorkerConcurrency'),
  runsBatchingWindowSeconds: int('runsBatchingWindowSeconds'),
  retentionDays: int('retentionDays'),
  succeededWebhookRetentionDays: int('succeededWebhookRetentionDays'),
  auditRetentionDays: int('auditRetentionDays'),
  retryLimit: int('retryLimit'),
  restartSweep: restartSweep(),
  authFailureLimit: int('authFailureLimit'),
  requestLogSample: share('requestLogSample'),
  throttles: throttles(),
  warmThroughput: perPart('warmThroughput'),
  onDemandThroughput: perPart('onDemandThroughput'),
  ...domain(),
  disableExecuteApiEndpoint: bool('disableExecuteApiEndpoint'),
  corsOrigins: list('corsOrigins'),
  ...alarms(),
  waiveAlarmDestination: bool('waiveAlarmDestination'),
  tracing: bool('tracing'),
  lambdaConcurrencyLimit: int('lambdaConcurrencyLimit'),
  rollbackAlarms: bool('rollbackAlarms'),
  ...workflows(),
});

app.synth();
