// The CDK app: `npx cdk deploy -c stage=prod -c rateLimits='{"pro":1200}' ...` (all context optional;
// the table in README "Deploying to AWS" lists every key).
import { App } from 'aws-cdk-lib';
import { FlowgateStack } from './stack.ts';

const app = new App();

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
    'Context webAclArn: AWS WAF cannot be associated with an API Gateway HTTP API. Put a CloudFront distribution with the web ACL in front of the API (README, "Deploying to AWS").',
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
  reservedConcurrency: int('reservedConcurrency'),
  ...domain(),
  ...alarms(),
});

app.synth();
