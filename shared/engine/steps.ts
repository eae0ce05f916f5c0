import { storage } from '../clients.ts';
import { config } from '../config.ts';
import { approvalPut, type Approval } from '../db/entities/approval.ts';
import { type Artifact, artifactObjectKey, artifactPut } from '../db/entities/artifact.ts';
import type { RunError } from '../db/entities/execution-state.ts';
import type { Execution } from '../db/entities/execution.ts';
import { readSecrets } from '../db/secret-values.ts';
import { newId } from '../ids.ts';
import { redactValues } from '../logger.ts';
import type { ArtifactStep, HttpRequestStep, ManualApprovalStep, NestedStep, Step } from './definition.ts';
import { evaluateTemplate } from './expressions.ts';
import { performHttpRequest } from '../egress/http.ts';
import { hostAllowed, stepSecretNames } from './secret-refs.ts';
import { StepError } from '../step-error.ts';
import { type CallbackWait, waitForCallback } from './steps/wait-for-callback.ts';
import { startForEach } from './steps/for-each.ts';
import { runSwitch } from './steps/switch.ts';

export const MAX_ARTIFACT_BYTES = 5 * 1024 * 1024;

export type Scope = Parameters<typeof evaluateTemplate>[1];
/** `maxMs`: what is left of the invocation for this step (an http_request's timeout is capped by it). */
export type StepContext = { execution: Execution; scope: Scope; signal: AbortSignal; now: number; maxMs?: number };

/** What a step did; the worker turns it into one checkpoint. */
export type Outcome =
  | {
      kind: 'done';
      output?: unknown;
      variables?: Record<string, unknown>;
      items?: object[];
      /** A `switch`'s choice: the step to go to, and the case that named it. */
      next?: string;
      branch?: { case: number | 'default'; next: string };
    }
  | { kind: 'loop'; items: unknown[] }
  | { kind: 'skipped' }
  | { kind: 'failed'; error: RunError; output?: unknown; continueRun: boolean; variables?: Record<string, unknown> }
  | { kind: 'fail-run'; error: RunError }
  | { kind: 'wait-approval'; approval: Approval; items: object[] }
  | { kind: 'sleep'; until: number }
  | CallbackWait;

export function scopeOf(e: Execution): Scope {
  const loop = e.loop;
  return {
    vars: e.variables,
    steps: e.outputs,
    execution: { id: e.executionId, workflowId: e.workflowId, trigger: e.trigger, startedAt: e.startedAt },
    ...(loop && loop.iteration < loop.items.length ? { item: loop.items[loop.iteration], index: loop.iteration } : {}),
    ...(e.triggerContext ? { trigger: e.triggerContext } : {}),
  };
}

const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Run one step. Throws StepError for failures the run reports; anything else is a worker fault. */
export async function runStep(step: Step | NestedStep, ctx: StepContext): Promise<Outcome> {
  if (step.when !== undefined && !(await evaluateTemplate(step.when, ctx.scope))) return { kind: 'skipped' };
  switch (step.type) {
    case 'set': {
      const values = (await evaluateTemplate(step.values, ctx.scope)) as Record<string, unknown>;
      return { kind: 'done', output: values, variables: values };
    }
    case 'fail':
      return {
        kind: 'fail-run',
        error: { code: step.code ?? 'STEP_FAILED', message: asText(await evaluateTemplate(step.message, ctx.scope)) },
      };
    case 'delay':
      return { kind: 'sleep', until: ctx.now + step.seconds * 1000 };
    case 'http_request':
      return httpRequest(step, ctx);
    case 'artifact':
      return artifact(step, ctx);
    case 'manual_approval':
      return manualApproval(step, ctx);
    case 'wait_for_callback':
      return waitForCallback(step, ctx);
    case 'switch':
      return runSwitch(step, ctx.scope);
    case 'for_each':
      return startForEach(step, ctx.scope);
  }
}

/**
 * An http_request that reads account secrets gets them bound as `$secrets`; whatever of its outcome
 * would show one of their values (output, saved variable, error message) shows `[redacted]`.
 */
async function httpRequest(step: HttpRequestStep, ctx: StepContext): Promise<Outcome> {
  const names = stepSecretNames(step);
  if (names.length === 0) return sendRequest(step, ctx, ctx.scope);
  const { values, hosts, missing } = await readSecrets(ctx.execution.accountId, names, ctx.now);
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
  step: HttpRequestStep,
  ctx: StepContext,
  scope: StepContext['scope'],
  secrets?: { readsSecrets: true; hostAllowed?: (host: string) => boolean },
): Promise<Outcome> {
  const url = asText(await evaluateTemplate(step.url, scope));
  const headers = (await evaluateTemplate(step.headers ?? {}, scope)) as Record<string, unknown>;
  const body = step.body === undefined ? undefined : await evaluateTemplate(step.body, scope);
  const result = await performHttpRequest(
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

async function artifact(step: ArtifactStep, ctx: StepContext): Promise<Outcome> {
  const content = await evaluateTemplate(step.content, ctx.scope);
  const isText = typeof content === 'string';
  const bytes = Buffer.from(isText ? content : JSON.stringify(content ?? null), 'utf8');
  if (bytes.length > MAX_ARTIFACT_BYTES)
    throw new StepError('ARTIFACT_TOO_LARGE', `Artifact ${step.name} is ${bytes.length} bytes; the limit is ${MAX_ARTIFACT_BYTES}.`);
  const bucket = config().ARTIFACTS_BUCKET;
  const { accountId, executionId } = ctx.execution;
  const artifactId = newId('ar');
  const a: Artifact = {
    artifactId,
    accountId,
    executionId,
    stepId: step.id,
    name: step.name,
    contentType: step.contentType ?? (isText ? 'text/plain; charset=utf-8' : 'application/json'),
    size: bytes.length,
    createdAt: ctx.now,
    objectKey: artifactObjectKey(accountId, executionId, artifactId),
  };
  const { PutObjectCommand } = await import('../s3.ts');
  await (await storage()).send(new PutObjectCommand({ Bucket: bucket, Key: a.objectKey, Body: bytes, ContentType: a.contentType }), {
    abortSignal: ctx.signal,
  });
  return { kind: 'done', output: { artifactId, name: a.name, size: a.size }, items: [artifactPut(a)] };
}

async function manualApproval(step: ManualApprovalStep, ctx: StepContext): Promise<Outcome> {
  const { execution: e, now } = ctx;
  const form = step.form
    ? await Promise.all(
        step.form.map(async (f) => ({
          ...f,
          ...(f.default !== undefined ? { default: await evaluateTemplate(f.default, ctx.scope) } : {}),
        })),
      )
    : undefined;
  const description = step.description === undefined ? undefined : asText(await evaluateTemplate(step.description, ctx.scope));
  const approval: Approval = {
    approvalId: newId('ap'),
    accountId: e.accountId,
    executionId: e.executionId,
    workflowId: e.workflowId,
    stepId: step.id,
    status: 'PENDING',
    title: asText(await evaluateTemplate(step.title, ctx.scope)),
    description,
    reviewers: step.reviewers,
    ...((step.minApprovals ?? 1) > 1 ? { minApprovals: step.minApprovals, approvals: 0, approvedBy: [] } : {}),
    workflowVersion: e.workflowVersion,
    form,
    onTimeout: step.onTimeout,
    onReject: step.onReject,
    expiresAt: step.timeoutSeconds ? now + step.timeoutSeconds * 1000 : undefined,
    createdAt: now,
    // Reminders and escalation, done by the scheduled sweep (shared/domain/nudges.ts).
    ...(step.remind ? { remind: step.remind, reminders: 0, nextRemindAt: now + step.remind.everySeconds * 1000 } : {}),
    ...(step.escalate ? { escalate: { at: now + step.escalate.afterSeconds * 1000, reviewers: step.escalate.reviewers } } : {}),
  };
  return { kind: 'wait-approval', approval, items: [approvalPut(approval)] };
}
