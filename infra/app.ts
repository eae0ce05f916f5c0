// The CDK app: `npx cdk deploy -c stage=prod -c rateLimits='{"pro":1200}' ...` (all context optional).
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
});

app.synth();
