import * as z from 'zod';
import { config } from '../../config.ts';
import { redactValues } from '../../logger.ts';
import { StepError } from '../../step-error.ts';
import { isExpression } from '../expression-syntax.ts';
import { evaluateTemplate } from '../expressions.ts';
import { hostAllowed, stepSecretNames } from '../secret-refs.ts';
import { base, isHttpUrl, JsonValue, VarName } from './common.ts';
import { RetryPolicy } from './retry-policy.ts';
import { asText, type LeafStepModule, type Outcome, type StepContext, stepFault } from './types.ts';

const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, 'must be an HTTP header name');
export const HttpRequestStep = z
  .strictObject({
    ...base,
    type: z.literal('http_request'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
    url: z.string().refine((s) => isExpression(s) || isHttpUrl(s), 'must be an absolute http(s) URL or an expression'),
    headers: z.record(HeaderName, z.string()).optional(),
    /** Further headers whose values are secrets (masked in views), besides the credential headers. */
    secretHeaders: z.array(HeaderName).max(50).optional(),
    body: JsonValue.optional(),
    timeoutMs: z.number().int().min(1).max(30_000).default(10_000),
    saveAs: VarName.optional(),
    allowFailure: z.boolean().default(false),
    retry: RetryPolicy.optional(),
  })
  .superRefine((s, ctx) => {
    // fetch() refuses a body on these methods: say so now rather than at run time.
    if (s.body !== undefined && (s.method === 'GET' || s.method === 'HEAD'))
      ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${s.method} request has no body` });
  });
export type HttpRequestStep = z.infer<typeof HttpRequestStep>;
/** The request fields an http_request sends (a wait_for_callback's `request` has them too). */
export type OutgoingRequest = Pick<HttpRequestStep, 'method' | 'url' | 'headers' | 'body' | 'timeoutMs'>;

/** A test run's answer in place of the request: what the target would have answered. */
export const HttpMock = z.strictObject({
  status: z.number().int().min(100).max(599),
  headers: z.record(z.string().max(256), z.string().max(8192)).default({}),
  body: z.unknown().default(null),
});
export type HttpMock = z.infer<typeof HttpMock>;

/**
 * `http_request`: one request through the egress checks (shared/egress/). Its effect is outside the
 * run (checkpointed before it); a cancel asked for meanwhile aborts it.
 */
export const httpRequestStep: LeafStepModule<'http_request', typeof HttpRequestStep> = {
  type: 'http_request',
  schema: HttpRequestStep,
  externalEffect: true,
  budgetMs: (step) => step.timeoutMs + 2_000,
  abortsOnCancel: true,
  request: [],
  mock: HttpMock,
  run: stepFault((step, ctx) => httpRequest(step, ctx)),
};

/**
 * An http_request that reads account secrets gets them bound as `$secrets`; whatever of its outcome
 * would show one of their values (output, saved variable, error message) shows `[redacted]`.
 */
export async function httpRequest(step: OutgoingRequest & { saveAs?: string; allowFailure: boolean }, ctx: StepContext): Promise<Outcome> {
  const names = stepSecretNames(step);
  if (names.length === 0) return sendRequest(step, ctx, ctx.scope);
  const { values, hosts, missing } = await ctx.io.readSecrets(ctx.execution.accountId, names, ctx.now);
  if (missing.length) throw new StepError('SECRET_NOT_FOUND', `The account has no secret named ${missing.join(', ')}.`);
  const used = Object.values(values);
  // Every secret the step reads that is bound to hosts must allow the target (and every redirect's).
  const bindings = Object.values(hosts);
  const allowed = bindings.length ? (host: string) => bindings.every((b) => hostAllowed(b, host)) : undefined;
  let outcome: Outcome;
  try {
    outcome = await sendRequest(step, ctx, { ...ctx.scope, secrets: values }, { readsSecrets: true, hostAllowed: allowed });
  } catch (e) {
    // An expression can transform a value before an error carries it (`$error($base64encode(...))`, a
    // host built from it that DNS then names): no redaction can recognise that, so the text of an
    // expression or request failure is dropped here, before anything stores or logs it.
    throw e instanceof StepError ? withheld(e) : e;
  }
  const r = <T>(v: T): T => redactValues(v, used);
  const vars = (v?: Record<string, unknown>) => v && Object.fromEntries(Object.entries(v).map(([k, x]) => [k, r(x)]));
  try {
    if (outcome.kind === 'done') return { ...outcome, output: r(outcome.output), variables: vars(outcome.variables) };
    if (outcome.kind !== 'failed') return outcome;
    const error = { ...outcome.error, message: r(outcome.error.message) };
    return { ...outcome, error, output: r(outcome.output), variables: vars(outcome.variables) };
  } catch {
    // A response nested deeper than the call stack: it cannot be checked, so it is not kept.
    throw new StepError('REDACTION_FAILED', 'The response is nested too deeply to check it for secret values.');
  }
}

/** The fixed text a failure of a step that reads secrets keeps: its code only. */
export const WITHHELD = '(details withheld: the step reads secrets)';
const WITHHELD_MESSAGES: Record<string, string> = {
  EXPRESSION_FAILED: `the expression failed ${WITHHELD}`,
  SECRET_NOT_ALLOWED: `a secret the step reads may not be sent to this host ${WITHHELD}`,
};
/** Failures whose message is fixed text (or the step's own settings), never anything evaluated: kept. */
const FIXED_TEXT = new Set(['TIMEOUT', 'CANCELLED', 'RESPONSE_TOO_LARGE', 'TOO_MANY_REDIRECTS', 'INVALID_URL']);
const withheld = (e: StepError) =>
  FIXED_TEXT.has(e.code) ? e : new StepError(e.code, WITHHELD_MESSAGES[e.code] ?? `the request failed ${WITHHELD}`);

async function sendRequest(
  step: OutgoingRequest & { saveAs?: string; allowFailure: boolean },
  ctx: StepContext,
  scope: StepContext['scope'],
  secrets?: { readsSecrets: true; hostAllowed?: (host: string) => boolean },
): Promise<Outcome> {
  const url = asText(await evaluateTemplate(step.url, scope));
  const headers = (await evaluateTemplate(step.headers ?? {}, scope)) as Record<string, unknown>;
  const body = step.body === undefined ? undefined : await evaluateTemplate(step.body, scope);
  const result = await ctx.io.request(
    {
      method: step.method,
      url,
      headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, asText(v)])),
      body: body === undefined ? undefined : asText(body),
      timeoutMs: Math.min(step.timeoutMs, ctx.maxMs ?? step.timeoutMs),
    },
    { allowlist: config().HTTP_STEP_ALLOWLIST, signal: ctx.signal, hostAllowed: secrets?.hostAllowed },
  );
  const variables = step.saveAs ? { [step.saveAs]: result } : undefined;
  if (result.status >= 200 && result.status < 300) return { kind: 'done', output: result, variables };
  // The host only: paths and queries may carry secrets and this message is stored on the run. Not even
  // that where the step reads secrets: the host may be built from one.
  const target = secrets ? 'the host' : new URL(url).host;
  const error = { code: 'HTTP_STATUS', message: `${step.method} ${target} answered ${result.status}.`, status: result.status };
  return { kind: 'failed', error, output: result, continueRun: step.allowFailure, variables };
}
