import * as z from 'zod';
import { compileExpression, ExpressionError, findExpressions, isExpression } from './expressions.ts';
import { EventType } from '../db/event-types.ts';
import { SECRET_REFERENCE, secretIssues } from './secret-refs.ts';
import { hasType, VariableType, VarName } from './variable-types.ts';
import { RetryPolicy } from './step-retry.ts';

/** Workflow definitions (WORKFLOWS.md): one schema; faults are reported at their exact path. */

export { hasType, VariableType, VarName };
export const StepId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
/** A user id: `usr_` and a lower-case ULID (Crockford base32). */
export const USER_ID = /^usr_[0-9a-hjkmnp-tv-z]{26}$/;
export const UserId = z.string().regex(USER_ID, 'must be a user id');
export const Reviewer = z
  .string()
  .regex(/^user:usr_[0-9a-hjkmnp-tv-z]{26}$|^role:(admin|member)$/, 'must be user:<user id>, role:admin or role:member');

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
/** Literal JSON inside a definition may nest this deep (keeps every walk over it shallow). */
export const MAX_JSON_DEPTH = 64;

function jsonIssue(v: unknown, path: (string | number)[], depth: number): { path: (string | number)[]; message: string } | undefined {
  if (depth > MAX_JSON_DEPTH) return { path, message: `JSON is nested deeper than ${MAX_JSON_DEPTH} levels` };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : { path, message: 'must be a finite number' };
  if (Array.isArray(v)) {
    for (const [i, item] of v.entries()) {
      const issue = jsonIssue(item, [...path, i], depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  if (typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))) {
    for (const [k, item] of Object.entries(v)) {
      const issue = jsonIssue(item, [...path, k], depth + 1);
      if (issue) return issue;
    }
    return undefined;
  }
  return { path, message: 'must be a JSON value' };
}

/** Any JSON value (required: `undefined` is not JSON). */
export const JsonValue = z.custom<Json>().superRefine((v, ctx) => {
  const issue = jsonIssue(v, [], 0);
  if (issue) ctx.addIssue({ code: 'custom', ...issue });
});

export const VariableDecl = z
  .strictObject({ type: VariableType, default: JsonValue.optional(), description: z.string().optional() })
  .superRefine((d, ctx) => {
    if (d.default !== undefined && !hasType(d.default, d.type))
      ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${d.type}` });
  });

export const isHttpUrl = (s: string, localHttpOnly = false) => {
  if (!/^https?:\/\//i.test(s) || !URL.canParse(s)) return false;
  const url = new URL(s);
  if (url.protocol === 'https:') return true;
  return !localHttpOnly || url.hostname === 'localhost' || url.hostname === '127.0.0.1';
};

export const MAX_STEPS = 100;

const When = z.custom<boolean | string>((v) => typeof v === 'boolean' || (typeof v === 'string' && isExpression(v)), {
  message: 'must be a boolean or an expression "{% ... %}"',
});
/** Where a step goes after it: another step's id (of the same list) or `"$end"`, which ends the run SUCCEEDED. */
export const END = '$end';
const TARGET = /^([A-Za-z0-9_-]{1,64}|\$end)$/;
const Target = z.string().regex(TARGET, 'must be a step id or "$end"');
/** What a step's failure does: fail the run (default), go on, or go to another step (`$steps.<id>.error` holds it). */
export const OnError = z.union([z.enum(['fail', 'continue']), z.strictObject({ next: Target })]);
const base = { id: StepId, title: z.string().optional(), when: When.optional(), next: Target.optional(), onError: OnError.optional() };

export const SetStep = z.strictObject({ ...base, type: z.literal('set'), values: z.record(VarName, JsonValue) });

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

const FieldType = z.enum(['string', 'number', 'boolean']);
const Scalar = z.union([z.string(), z.number(), z.boolean()]);
export const FormField = z
  .strictObject({
    name: VarName,
    type: FieldType,
    label: z.string().optional(),
    required: z.boolean().default(false),
    default: Scalar.optional(),
    enum: z.array(Scalar).min(1).max(100).optional(),
  })
  .superRefine((f, ctx) => {
    const literal = f.default !== undefined && !(typeof f.default === 'string' && isExpression(f.default));
    if (literal && !hasType(f.default, f.type))
      ctx.addIssue({ code: 'custom', path: ['default'], message: `must be a ${f.type} or an expression` });
    else if (literal && f.enum && !f.enum.includes(f.default!))
      ctx.addIssue({ code: 'custom', path: ['default'], message: 'must be one of enum' });
    f.enum?.forEach((v, i) => {
      if (!hasType(v, f.type)) ctx.addIssue({ code: 'custom', path: ['enum', i], message: `must be a ${f.type}` });
    });
  });

/** A channel's name in its account (`POST /api/channels`): what an approval's `notify` refers to. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const ChannelName = z.string().regex(CHANNEL_NAME, 'must be 1-64 letters, digits, _, . or -, starting with a letter or digit');
/** A Slack conversation: `#name` or a channel id (C…, G…, D…). */
export const SLACK_CONVERSATION = /^#[a-z0-9][a-z0-9._-]{0,79}$|^[CGD][A-Z0-9]{4,}$/;
/**
 * Who an approval's message goes to on one channel: a Slack conversation (`#deploys`), or reviewers
 * (`user:<id>`, `role:<role>`) mailed or messaged one by one. Absent: Slack's default channel (else
 * the step's reviewers), the step's reviewers by email, the Teams webhook's chat. Checked against the
 * account's channels when the workflow is saved (shared/domain/workflows.ts).
 */
export const ApprovalNotify = z.strictObject({
  channel: ChannelName,
  to: z
    .union([
      z.string().regex(SLACK_CONVERSATION, 'must be a Slack channel (#name or its id) or a list of reviewers'),
      z.array(Reviewer).min(1).max(50),
    ])
    .optional(),
});

/** `remind`: every `everySeconds` (at least a minute, the sweep's period) while pending, `max` times at most. */
export const ApprovalRemind = z.strictObject({
  everySeconds: z.number().int().min(60).max(604_800),
  max: z.number().int().min(1).max(20),
});
/** `escalate`: `afterSeconds` after the request, `reviewers` may decide too and are told through `notify`. */
export const ApprovalEscalate = z.strictObject({
  afterSeconds: z.number().int().min(60).max(2_592_000),
  reviewers: z.array(Reviewer).min(1).max(50),
  notify: z.array(ApprovalNotify).min(1).max(10).optional(),
});

/** An escalation after the approval's deadline would never happen: refused at save. */
function escalateIssue(step: unknown): string | undefined {
  const { type, timeoutSeconds, escalate } = (step ?? {}) as {
    type?: unknown;
    timeoutSeconds?: unknown;
    escalate?: { afterSeconds?: unknown };
  };
  if (type !== 'manual_approval' || typeof timeoutSeconds !== 'number' || typeof escalate?.afterSeconds !== 'number') return undefined;
  return escalate.afterSeconds < timeoutSeconds ? undefined : `must be less than timeoutSeconds (${timeoutSeconds})`;
}

export const ManualApprovalStep = z.strictObject({
  ...base,
  type: z.literal('manual_approval'),
  title: z.string().min(1),
  description: z.string().optional(),
  reviewers: z.array(Reviewer).min(1).max(50),
  /** Distinct reviewers who must approve (absent: 1); one rejection rejects. See `quorumIssue`. */
  minApprovals: z.number().int().min(1).max(100).optional(),
  timeoutSeconds: z.number().int().min(60).max(2_592_000).optional(),
  onTimeout: z.enum(['fail', 'approve', 'reject']).default('fail'),
  onReject: z.enum(['fail', 'continue']).default('fail'),
  /** Who is told, on which of the account's channels (`ApprovalNotify`). */
  notify: z.array(ApprovalNotify).min(1).max(10).optional(),
  /** Reminders to the reviewers who have not decided, through `notify` (`ApprovalRemind`). */
  remind: ApprovalRemind.optional(),
  /** Reviewers added while still pending, told through their own `notify` (`ApprovalEscalate`). */
  escalate: ApprovalEscalate.optional(),
  form: z
    .array(FormField)
    .max(50)
    .superRefine((fields, ctx) => {
      const seen = new Set<string>();
      fields.forEach((f, i) => {
        if (seen.has(f.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate field name "${f.name}"` });
        seen.add(f.name);
      });
    })
    .optional(),
});

export const ArtifactStep = z.strictObject({
  ...base,
  type: z.literal('artifact'),
  name: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^/\\]*$/, 'must not contain / or \\'),
  /** Absent: decided at run time from the content. */
  contentType: z.string().min(1).max(255).optional(),
  content: JsonValue,
  retry: RetryPolicy.optional(),
});

export const DelayStep = z.strictObject({ ...base, type: z.literal('delay'), seconds: z.number().int().min(1).max(86_400) });

export const FailStep = z.strictObject({
  ...base,
  type: z.literal('fail'),
  message: z.string().min(1),
  code: z
    .string()
    .max(64)
    .regex(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/, 'must be UPPER_SNAKE')
    .optional(),
});

/** The request a wait_for_callback sends once its callback exists: an http_request's fields, with `$callback.url` and `$callback.token`. */
const { method, url, headers, secretHeaders, body, timeoutMs } = HttpRequestStep.shape;
export const CallbackRequest = z.strictObject({ method, url, headers, secretHeaders, body, timeoutMs }).superRefine((s, ctx) => {
  if (s.body !== undefined && (s.method === 'GET' || s.method === 'HEAD'))
    ctx.addIssue({ code: 'custom', path: ['body'], message: `a ${s.method} request has no body` });
});
export const WaitForCallbackStep = z
  .strictObject({
    ...base,
    type: z.literal('wait_for_callback'),
    timeoutSeconds: z.number().int().min(1).max(31_536_000),
    heartbeatSeconds: z.number().int().min(1).max(31_536_000).optional(),
    onTimeout: z.enum(['fail', 'continue']).default('fail'),
    request: CallbackRequest.optional(),
  })
  .superRefine((s, ctx) => {
    if (s.heartbeatSeconds !== undefined && s.heartbeatSeconds > s.timeoutSeconds)
      ctx.addIssue({ code: 'custom', path: ['heartbeatSeconds'], message: 'must be at most timeoutSeconds' });
  });

/** `switch`: the first case whose `when` is true names the next step; else `default`; else the step fails `NO_CASE_MATCHED`. */
export const SwitchStep = z.strictObject({
  ...base,
  type: z.literal('switch'),
  cases: z
    .array(z.strictObject({ when: When, next: Target }))
    .min(1)
    .max(50),
  default: Target.optional(),
});

/** The longest list a `for_each` takes. */
export const MAX_ITEMS = 1000;
/** Steps a `for_each` runs once per item: any type but `for_each`. */
const NESTED_STEPS = [
  SetStep,
  HttpRequestStep,
  ManualApprovalStep,
  ArtifactStep,
  DelayStep,
  FailStep,
  WaitForCallbackStep,
  SwitchStep,
] as const;
export const NestedStep = z.discriminatedUnion('type', NESTED_STEPS);
export const ForEachStep = z.strictObject({
  ...base,
  type: z.literal('for_each'),
  items: z.string().refine(isExpression, 'must be an expression "{% ... %}"'),
  steps: z.array(NestedStep).min(1).max(MAX_STEPS),
  maxItems: z.number().int().min(1).max(MAX_ITEMS).default(MAX_ITEMS),
});

export const Step = z.discriminatedUnion('type', [...NESTED_STEPS, ForEachStep]);

export const Notification = z.strictObject({
  // https only; plain http is accepted for localhost and 127.0.0.1 (local mode and tests).
  url: z
    .string()
    .max(2048)
    .refine((s) => isHttpUrl(s, true), 'must be an https URL (http only for localhost or 127.0.0.1)'),
  events: z.array(EventType).min(1).max(EventType.options.length),
  // On update, the mask a view showed (or no secret) keeps the stored one (shared/domain/definition-secrets.ts).
  secret: z
    .string()
    .max(512)
    .refine(
      (s) => /^whsec_[A-Za-z0-9+/=]{24,}$/.test(s) || /^••••[A-Za-z0-9+/=]{0,4}$/.test(s) || SECRET_REFERENCE.test(s),
      'must be a whsec_ secret or {% $secrets.NAME %}',
    )
    .optional(),
});

/**
 * A quorum of named users only cannot exceed them (`role:` reviewers are counted against the
 * account when the workflow is saved, `shared/domain/workflows.ts`).
 */
function quorumIssue(step: unknown): string | undefined {
  const { type, reviewers, minApprovals } = (step ?? {}) as { type?: unknown; reviewers?: unknown; minApprovals?: unknown };
  if (type !== 'manual_approval' || typeof minApprovals !== 'number' || !Array.isArray(reviewers)) return undefined;
  if (!reviewers.every((r) => typeof r === 'string' && r.startsWith('user:'))) return undefined;
  const users = new Set(reviewers).size;
  return minApprovals > users ? `must be at most ${users}, the reviewers listed` : undefined;
}

type Issue = { path: (string | number)[]; message: string };
const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/**
 * Step ids unique in the whole definition (nested steps included), and every `next`, `onError.next`
 * and switch target naming a step of the same list (a nested step's: one of its siblings) or `"$end"`.
 */
function flowIssues(steps: unknown[]): Issue[] {
  const issues: Issue[] = [];
  const seen = new Map<string, string>();
  const lists: { path: (string | number)[]; steps: unknown[] }[] = [{ path: ['steps'], steps }];
  steps.forEach((s, i) => {
    const nested = record(s).steps;
    if (record(s).type === 'for_each' && Array.isArray(nested)) lists.push({ path: ['steps', i, 'steps'], steps: nested });
  });
  for (const list of lists) {
    list.steps.forEach((s, i) => {
      const id = record(s).id;
      if (typeof id !== 'string') return;
      const where = [...list.path, i].join('.');
      const first = seen.get(id);
      if (first === undefined) seen.set(id, where);
      else issues.push({ path: [...list.path, i, 'id'], message: `duplicate step id "${id}" (also ${first}.id)` });
    });
  }
  for (const list of lists) {
    const ids = new Set(list.steps.map((s) => record(s).id).filter((id) => typeof id === 'string'));
    const check = (target: unknown, path: (string | number)[]) => {
      // A malformed target is the schema's to report.
      if (typeof target === 'string' && TARGET.test(target) && target !== END && !ids.has(target))
        issues.push({
          path,
          message: `no step "${target}"${list.path.length > 1 ? ' in this for_each' : ''} (a target must be a step of the same list or "$end")`,
        });
    };
    list.steps.forEach((s, i) => {
      const at = [...list.path, i];
      const step = record(s);
      check(step.next, [...at, 'next']);
      check(record(step.onError).next, [...at, 'onError', 'next']);
      if (step.type === 'switch') {
        if (Array.isArray(step.cases)) {
          step.cases.forEach((c, j) => {
            check(record(c).next, [...at, 'cases', j, 'next']);
          });
        }
        check(step.default, [...at, 'default']);
      }
      if (list.path.length > 1 && step.type === 'for_each')
        issues.push({ path: [...at, 'type'], message: 'a for_each cannot contain a for_each' });
    });
  }
  return issues;
}

/** Unique step ids, quorums, and every expression anywhere compiles. Runs even when other fields failed, on the raw value. */
function crossCheck(def: unknown, ctx: z.RefinementCtx) {
  const steps = (def as { steps?: unknown } | null)?.steps;
  if (Array.isArray(steps)) {
    steps.forEach((s: unknown, i) => {
      const issue = quorumIssue(s);
      if (issue) ctx.addIssue({ code: 'custom', path: ['steps', i, 'minApprovals'], message: issue });
      const late = escalateIssue(s);
      if (late) ctx.addIssue({ code: 'custom', path: ['steps', i, 'escalate', 'afterSeconds'], message: late });
      const nested = record(s).steps;
      if (record(s).type === 'for_each' && Array.isArray(nested))
        nested.forEach((n: unknown, j) => {
          const inner = quorumIssue(n);
          if (inner) ctx.addIssue({ code: 'custom', path: ['steps', i, 'steps', j, 'minApprovals'], message: inner });
          const innerLate = escalateIssue(n);
          if (innerLate) ctx.addIssue({ code: 'custom', path: ['steps', i, 'steps', j, 'escalate', 'afterSeconds'], message: innerLate });
        });
    });
    for (const issue of flowIssues(steps)) ctx.addIssue({ code: 'custom', ...issue });
  }
  // Deeper literal JSON is refused by JsonValue anyway.
  for (const { path, source } of findExpressions(def, [], MAX_JSON_DEPTH + 8)) {
    try {
      compileExpression(source);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path, message: e instanceof ExpressionError ? e.message : 'invalid expression' });
    }
  }
  for (const issue of secretIssues(def, MAX_JSON_DEPTH + 8)) ctx.addIssue({ code: 'custom', ...issue });
}

export const DEFAULT_MAX_STEP_EXECUTIONS = 1000;
export const MAX_STEP_EXECUTIONS = 10_000;

export const WorkflowDefinition = z
  .strictObject({
    variables: z.record(VarName, VariableDecl).optional(),
    steps: z.array(Step).min(1).max(MAX_STEPS),
    /** Steps a run may execute in all, nested ones and repeats included (absent: `DEFAULT_MAX_STEP_EXECUTIONS`). */
    maxStepExecutions: z.number().int().min(1).max(MAX_STEP_EXECUTIONS).optional(),
    output: JsonValue.optional(),
    notifications: z.array(Notification).max(10).optional(),
  })
  .superRefine(crossCheck, { when: () => true });

export type WorkflowDefinition = z.infer<typeof WorkflowDefinition>;
export type Step = z.infer<typeof Step>;
export type SetStep = z.infer<typeof SetStep>;
export type HttpRequestStep = z.infer<typeof HttpRequestStep>;
export type ManualApprovalStep = z.infer<typeof ManualApprovalStep>;
export type ArtifactStep = z.infer<typeof ArtifactStep>;
export type DelayStep = z.infer<typeof DelayStep>;
export type FailStep = z.infer<typeof FailStep>;
export type WaitForCallbackStep = z.infer<typeof WaitForCallbackStep>;
export type SwitchStep = z.infer<typeof SwitchStep>;
export type ForEachStep = z.infer<typeof ForEachStep>;
export type NestedStep = z.infer<typeof NestedStep>;
export type OnError = z.infer<typeof OnError>;
export type FormField = z.infer<typeof FormField>;
export type Notification = z.infer<typeof Notification>;
export type ApprovalNotify = z.infer<typeof ApprovalNotify>;
export type ApprovalRemind = z.infer<typeof ApprovalRemind>;
export type ApprovalEscalate = z.infer<typeof ApprovalEscalate>;
